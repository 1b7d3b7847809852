/**
 * Payables and the payout protocol (DESIGN §4.12; docs/operations-payouts.md). As in
 * redemption-repo.ts, whatever must happen once is one conditional statement or one
 * transaction that first touches the payout row it is fenced by (`id` and `attempt`):
 * that UPDATE row-locks the payout on PostgreSQL (SQLite transactions hold the write
 * lock), so a run whose lease was taken over changes nothing.
 */
import type { Kysely, Selectable } from 'kysely';
import { sql } from 'kysely';
import type {
  BeginPayoutResult,
  Chain,
  Payable,
  PayableRepo,
  PayableState,
  PayableTotals,
  PayoutHold,
  PayoutState,
  RecipientDue,
} from '../store.ts';
import type { Backend } from './backend.ts';
import { checkMs, renewLease, takeOverLapsed, toPayout } from './fenced-rows.ts';
import { newId } from './ids.ts';
import { pageSize, toNum } from './rows.ts';
import type { Database, PayablesTable, PayoutsTable } from './schema.ts';

type PayableRow = Selectable<PayablesTable>;
type PayoutRow = Selectable<PayoutsTable>;

const UNFINISHED: PayoutState[] = ['open', 'sent'];
/** Ids and recipients per statement, well under both databases' bound-parameter limits. */
const CHUNK = 500;
/** Rounds of read-then-write before giving up on a payout row that keeps changing under us. */
const MAX_ROUNDS = 4;

function toPayable(r: PayableRow): Payable {
  return {
    id: r.id,
    redemptionId: r.redemption_id,
    projectId: r.project_id,
    chain: r.chain as Chain,
    network: r.network,
    recipient: r.recipient,
    amount: BigInt(r.amount),
    createdAtMs: toNum(r.created_at_ms),
    state: r.state as PayableState,
    payoutId: r.payout_id,
    payoutTx: r.payout_tx,
    paidAtMs: r.paid_at_ms === null ? null : toNum(r.paid_at_ms),
  };
}

/**
 * An exact sum as a decimal string: SQLite sums 64-bit integers exactly (its TEXT amounts
 * are cast first) and PostgreSQL sums BIGINT into NUMERIC; both then go out as text, so no
 * driver turns the total into a lossy number.
 */
const exactSum = sql<string>`cast(sum(cast(amount as bigint)) as text)`;

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

export function payableRepo(backend: Backend): PayableRepo {
  const { db } = backend;

  async function byRedemption(redemptionId: string): Promise<Payable | null> {
    const r = await db
      .selectFrom('payables')
      .selectAll()
      .where('redemption_id', '=', redemptionId)
      .executeTakeFirst();
    return r ? toPayable(r) : null;
  }

  async function unfinished(chain: Chain, network: string): Promise<PayoutRow | undefined> {
    return db
      .selectFrom('payouts')
      .selectAll()
      .where('chain', '=', chain)
      .where('network', '=', network)
      .where('state', 'in', UNFINISHED)
      .executeTakeFirst();
  }

  /** Touches the held payout in `trx` (taking its row lock); undefined if the hold is stale. */
  async function touch(
    trx: Kysely<Database>,
    hold: PayoutHold,
    states: PayoutState[],
    set: Partial<{ state: PayoutState; error: string }>,
    nowMs: number,
  ): Promise<PayoutRow | undefined> {
    return trx
      .updateTable('payouts')
      .set({ ...set, updated_at_ms: nowMs })
      .where('id', '=', hold.id)
      .where('attempt', '=', hold.attempt)
      .where('state', 'in', states)
      .returningAll()
      .executeTakeFirst();
  }

  async function dueOf(trx: Kysely<Database>, payoutId: string): Promise<RecipientDue[]> {
    const rows = await trx
      .selectFrom('payables')
      .select((eb) => ['recipient', exactSum.as('total'), eb.fn.countAll().as('n')])
      .where('payout_id', '=', payoutId)
      .where('state', '=', 'paying')
      .groupBy('recipient')
      .orderBy('recipient')
      .execute();
    return rows.map((r) => ({
      recipient: r.recipient,
      amount: BigInt(r.total),
      count: toNum(r.n as number | string | bigint),
    }));
  }

  return {
    async record(p) {
      if (typeof p.amount !== 'bigint' || p.amount <= 0n) {
        throw new RangeError('a payable amount must be a positive bigint (atomic units)');
      }
      checkMs('nowMs', p.nowMs);
      const inserted = await db
        .insertInto('payables')
        .values({
          id: newId('pay'),
          redemption_id: p.redemptionId,
          project_id: p.projectId,
          chain: p.chain,
          network: p.network,
          recipient: p.recipient,
          amount: p.amount.toString(),
          created_at_ms: p.nowMs,
          state: 'pending',
          payout_id: null,
          payout_tx: null,
          paid_at_ms: null,
        })
        .onConflict((oc) => oc.column('redemption_id').doNothing())
        .returningAll()
        .executeTakeFirst();
      if (inserted) return toPayable(inserted);
      // Payables are never deleted, so the row that won the key is there to read.
      const existing = await byRedemption(p.redemptionId);
      if (!existing) throw new Error(`payable for redemption ${p.redemptionId} neither inserted nor found`);
      return existing;
    },

    byRedemption,

    async pending(q) {
      const rows = await db
        .selectFrom('payables')
        .selectAll()
        .where('chain', '=', q.chain)
        .where('network', '=', q.network)
        .where('state', '=', 'pending')
        .orderBy('created_at_ms')
        .orderBy('id')
        .limit(pageSize(q.limit, 10_000))
        .execute();
      return rows.map(toPayable);
    },

    async pendingByRecipient(q) {
      const rows = await db
        .selectFrom('payables')
        .select((eb) => [
          'recipient',
          exactSum.as('total'),
          eb.fn.countAll().as('n'),
          eb.fn.min('created_at_ms').as('oldest'),
        ])
        .where('chain', '=', q.chain)
        .where('network', '=', q.network)
        .where('state', '=', 'pending')
        .groupBy('recipient')
        // Oldest debt first, so a capped run never starves a small recipient.
        .orderBy('oldest')
        .orderBy('recipient')
        .limit(pageSize(q.limit, 10_000))
        .execute();
      return rows.map((r) => ({
        recipient: r.recipient,
        amount: BigInt(r.total),
        count: toNum(r.n as number | string | bigint),
      }));
    },

    async markPaid(ids, o) {
      checkMs('nowMs', o.nowMs);
      const marked: string[] = [];
      for (const part of chunks([...new Set(ids)])) {
        const rows = await db
          .updateTable('payables')
          .set({ state: 'paid', payout_id: o.payoutId, payout_tx: o.tx, paid_at_ms: o.nowMs })
          .where('id', 'in', part)
          .where((eb) =>
            eb.or([
              eb('state', '=', 'pending'),
              eb.and([eb('state', '=', 'paying'), eb('payout_id', '=', o.payoutId)]),
            ]),
          )
          .returning('id')
          .execute();
        marked.push(...rows.map((r) => r.id));
      }
      return marked;
    },

    async summary(projectId) {
      const rows = await db
        .selectFrom('payables')
        .select(['chain', 'network', 'state', exactSum.as('total')])
        .where('project_id', '=', projectId)
        // A cancelled share (its payment was refunded) is owed to nobody.
        .where('state', '!=', 'cancelled')
        .groupBy(['chain', 'network', 'state'])
        .orderBy('chain')
        .orderBy('network')
        .execute();
      const out = new Map<string, PayableTotals>();
      for (const r of rows) {
        const k = `${r.chain}\u0000${r.network}`;
        let t = out.get(k);
        if (!t) {
          t = { chain: r.chain as Chain, network: r.network, pending: 0n, paid: 0n };
          out.set(k, t);
        }
        if (r.state === 'paid') t.paid += BigInt(r.total);
        else t.pending += BigInt(r.total);
      }
      return [...out.values()];
    },

    async byPayout(payoutId) {
      const rows = await db
        .selectFrom('payables')
        .selectAll()
        .where('payout_id', '=', payoutId)
        .orderBy('recipient')
        .orderBy('id')
        .execute();
      return rows.map(toPayable);
    },

    async beginPayout(q): Promise<BeginPayoutResult> {
      checkMs('nowMs', q.nowMs);
      if (!Number.isSafeInteger(q.leaseMs) || q.leaseMs <= 0)
        throw new RangeError('leaseMs must be positive');
      let last: PayoutRow | undefined;
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const open = await unfinished(q.chain, q.network);
        if (open) {
          last = open;
          if (toNum(open.lease_until_ms) >= q.nowMs) return { kind: 'busy', payout: toPayout(open) };
          const taken = await takeOverLapsed(db, 'payouts', open, q);
          if (taken) return { kind: 'recover', payout: toPayout(taken) };
          continue; // Another run took it or finished it first: look again.
        }
        const inserted = await db
          .insertInto('payouts')
          .values({
            id: newId('pout'),
            chain: q.chain,
            network: q.network,
            state: 'open',
            attempt: 1,
            lease_until_ms: q.nowMs + q.leaseMs,
            tx: null,
            tx_bytes: null,
            tx_expiry: null,
            error: null,
            created_at_ms: q.nowMs,
            updated_at_ms: q.nowMs,
          })
          // The partial unique index lets one unfinished payout per chain and network exist.
          .onConflict((oc) => oc.doNothing())
          .returningAll()
          .executeTakeFirst();
        if (inserted) return { kind: 'begun', payout: toPayout(inserted) };
      }
      if (last) return { kind: 'busy', payout: toPayout(last) };
      throw new Error('payout lock: neither a free slot nor the payout holding it');
    },

    async unfinishedPayout(chain, network) {
      const r = await unfinished(chain, network);
      return r ? toPayout(r) : null;
    },

    async payout(id) {
      const r = await db.selectFrom('payouts').selectAll().where('id', '=', id).executeTakeFirst();
      return r ? toPayout(r) : null;
    },

    renewPayout: (hold, leaseUntilMs, nowMs) => renewLease(db, 'payouts', hold, leaseUntilMs, nowMs),

    async assignToPayout(hold, q) {
      return db.transaction().execute(async (trx) => {
        const payout = await touch(trx, hold, ['open'], {}, q.nowMs);
        if (!payout) return null;
        for (const part of chunks([...new Set(q.recipients)])) {
          await trx
            .updateTable('payables')
            .set({ state: 'paying', payout_id: payout.id })
            .where('chain', '=', payout.chain)
            .where('network', '=', payout.network)
            .where('state', '=', 'pending')
            .where('recipient', 'in', part)
            .execute();
        }
        return dueOf(trx, payout.id);
      });
    },

    async recordPayoutSent(hold, sent) {
      const r = await db
        .updateTable('payouts')
        .set({
          state: 'sent',
          tx: sent.tx,
          tx_bytes: sent.txBytes,
          tx_expiry: sent.txExpiry,
          updated_at_ms: sent.nowMs,
        })
        .where('id', '=', hold.id)
        .where('attempt', '=', hold.attempt)
        .where('state', '=', 'open')
        .executeTakeFirst();
      return r.numUpdatedRows === 1n;
    },

    async settlePayout(hold, nowMs) {
      return db.transaction().execute(async (trx) => {
        const payout = await touch(trx, hold, ['sent'], { state: 'paid' }, nowMs);
        if (!payout) return null;
        const r = await trx
          .updateTable('payables')
          .set({ state: 'paid', payout_tx: payout.tx, paid_at_ms: nowMs })
          .where('payout_id', '=', payout.id)
          .where('state', '=', 'paying')
          .executeTakeFirst();
        return { paid: toNum(r.numUpdatedRows) };
      });
    },

    async failPayout(hold, error, nowMs) {
      return db.transaction().execute(async (trx) => {
        const payout = await touch(trx, hold, UNFINISHED, { state: 'failed', error }, nowMs);
        if (!payout) return null;
        const r = await trx
          .updateTable('payables')
          .set({ state: 'pending', payout_id: null })
          .where('payout_id', '=', payout.id)
          .where('state', '=', 'paying')
          .executeTakeFirst();
        return { released: toNum(r.numUpdatedRows) };
      });
    },
  };
}
