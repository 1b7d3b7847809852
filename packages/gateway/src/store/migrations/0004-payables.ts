import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Backend } from '../kysely/backend.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
type Db = Kysely<any>;

/**
 * Splits for stock x402 v2 payers (DESIGN §4.12, issue 11): a project may opt in to
 * `x402_exact`, the platform then receives the whole amount of a v2 payment, and the
 * provider's share becomes a row in `payables`, paid out in batches by the operator's
 * payout command. `payouts` is that command's lock and its record of what it sent.
 *
 * Payables carry no foreign key to projects: money owed outlives a deleted project.
 */
export function payables(types: Backend['types']): Migration {
  const { key, bool, ms, amount } = types;
  return {
    async up(db: Db) {
      await db.schema
        .alterTable('projects')
        .addColumn('x402_exact', bool, (c) => c.notNull().defaultTo(false))
        .execute();

      await db.schema
        .createTable('payables')
        .addColumn('id', key, (c) => c.primaryKey())
        // One payable per paid request: a settlement recorded twice stays one row.
        .addColumn('redemption_id', key, (c) => c.notNull().unique())
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
        .addCheckConstraint('payables_state_check', sql`state in ('pending', 'paying', 'paid')`)
        .execute();
      await db.schema
        .createIndex('payables_due_idx')
        .on('payables')
        .columns(['chain', 'network', 'state', 'recipient'])
        .execute();
      await db.schema.createIndex('payables_project_idx').on('payables').column('project_id').execute();
      await db.schema.createIndex('payables_payout_idx').on('payables').column('payout_id').execute();

      await db.schema
        .createTable('payouts')
        .addColumn('id', key, (c) => c.primaryKey())
        .addColumn('chain', 'text', (c) => c.notNull())
        .addColumn('network', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        // Fencing token and lease, as on redemptions: a run whose lease lapsed and was taken over changes nothing.
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('lease_until_ms', ms, (c) => c.notNull())
        .addColumn('tx', 'text')
        .addColumn('tx_bytes', 'text')
        .addColumn('tx_expiry', 'text')
        .addColumn('error', 'text')
        .addColumn('created_at_ms', ms, (c) => c.notNull())
        .addColumn('updated_at_ms', ms, (c) => c.notNull())
        .addCheckConstraint('payouts_state_check', sql`state in ('open', 'sent', 'paid', 'failed')`)
        .execute();
      // The payout lock: at most one unfinished payout per chain and network, across processes.
      await db.schema
        .createIndex('payouts_unfinished_uq')
        .on('payouts')
        .columns(['chain', 'network'])
        .unique()
        .where(sql.ref('state'), 'in', sql`('open', 'sent')`)
        .execute();
    },
    async down(db: Db) {
      await db.schema.dropTable('payouts').execute();
      await db.schema.dropTable('payables').execute();
      await db.schema.alterTable('projects').dropColumn('x402_exact').execute();
    },
  };
}
