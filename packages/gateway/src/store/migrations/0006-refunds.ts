import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Backend } from '../kysely/backend.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
type Db = Kysely<any>;

/**
 * Refunds of undelivered payments (issue 13; docs/operations-refunds.md): one row per
 * refunded redemption, the operator's refund command's lease-fenced record of what it
 * sent, as `payouts` is for payouts. A refund pays the payer back the gross it paid.
 *
 * Payables gain the final state `cancelled`: the provider's share of a refunded v2
 * payment that was never paid out. Neither database can change a CHECK constraint in
 * place on both backends alike, so `payables` is rebuilt with the wider one (same
 * columns, same rows, same indexes). Both backends run a migration in one transaction
 * (PostgreSQL's migrator, SQLite's opener), so the rebuild is all or nothing.
 */
export function refunds(types: Backend['types']): Migration {
  const { key, ms, amount } = types;

  async function rebuildPayables(db: Db, states: string[]): Promise<void> {
    await db.schema
      .createTable('payables_next')
      .addColumn('id', key, (c) => c.notNull())
      .addColumn('redemption_id', key, (c) => c.notNull())
      .addColumn('project_id', key, (c) => c.notNull())
      .addColumn('chain', 'text', (c) => c.notNull())
      .addColumn('network', 'text', (c) => c.notNull())
      .addColumn('recipient', 'text', (c) => c.notNull())
      .addColumn('amount', amount, (c) => c.notNull())
      .addColumn('created_at_ms', ms, (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('payout_id', key)
      .addColumn('payout_tx', 'text')
      .addColumn('paid_at_ms', ms)
      // Named per version: PostgreSQL keeps the names of a renamed table's constraints and their indexes.
      .addPrimaryKeyConstraint(`payables_pk_${states.length}`, ['id'])
      .addUniqueConstraint(`payables_redemption_uq_${states.length}`, ['redemption_id'])
      .addCheckConstraint(
        `payables_state_check_${states.length}`,
        sql`state in (${sql.join(states.map((s) => sql.lit(s)))})`,
      )
      .execute();
    await sql`insert into payables_next (id, redemption_id, project_id, chain, network, recipient, amount, created_at_ms, state, payout_id, payout_tx, paid_at_ms)
      select id, redemption_id, project_id, chain, network, recipient, amount, created_at_ms, state, payout_id, payout_tx, paid_at_ms from payables`.execute(
      db,
    );
    await db.schema.dropTable('payables').execute();
    await db.schema.alterTable('payables_next').renameTo('payables').execute();
    await db.schema
      .createIndex('payables_due_idx')
      .on('payables')
      .columns(['chain', 'network', 'state', 'recipient'])
      .execute();
    await db.schema.createIndex('payables_project_idx').on('payables').column('project_id').execute();
    await db.schema.createIndex('payables_payout_idx').on('payables').column('payout_id').execute();
  }

  return {
    async up(trx: Db) {
      await rebuildPayables(trx, ['pending', 'paying', 'paid', 'cancelled']);
      await trx.schema
        .createTable('refunds')
        .addColumn('id', key, (c) => c.primaryKey())
        // One refund per payment, however often the command runs.
        .addColumn('redemption_id', key, (c) => c.notNull().unique())
        .addColumn('chain', 'text', (c) => c.notNull())
        .addColumn('network', 'text', (c) => c.notNull())
        // The payer, paid back the gross (atomic units) it paid.
        .addColumn('recipient', 'text', (c) => c.notNull())
        .addColumn('amount', amount, (c) => c.notNull())
        // The provider's share it had already received on-chain (v1 split, or a payable paid out):
        // the platform refunds it from its own funds and the provider owes it back.
        .addColumn('provider_kept', amount, (c) => c.notNull())
        // The pending payable this refund cancelled (a v2 payment's provider share), if any.
        .addColumn('payable_id', key)
        .addColumn('state', 'text', (c) => c.notNull())
        // Fencing token and lease, as on payouts: a run whose lease lapsed and was taken over changes nothing.
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('lease_until_ms', ms, (c) => c.notNull())
        .addColumn('tx', 'text')
        .addColumn('tx_bytes', 'text')
        .addColumn('tx_expiry', 'text')
        .addColumn('error', 'text')
        .addColumn('created_at_ms', ms, (c) => c.notNull())
        .addColumn('updated_at_ms', ms, (c) => c.notNull())
        .addColumn('refunded_at_ms', ms)
        .addCheckConstraint('refunds_state_check', sql`state in ('open', 'sent', 'refunded')`)
        .execute();
      await trx.schema.createIndex('refunds_state_idx').on('refunds').columns(['state', 'chain']).execute();
    },
    async down(trx: Db) {
      await trx.schema.dropTable('refunds').execute();
      // A cancelled share is owed to nobody: it must not become payable again.
      await trx.deleteFrom('payables').where('state', '=', 'cancelled').execute();
      await rebuildPayables(trx, ['pending', 'paying', 'paid']);
    },
  };
}
