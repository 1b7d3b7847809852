/**
 * Refunds of undelivered payments and the refund protocol (docs/operations-refunds.md).
 * As in payable-repo.ts, whatever must happen once is one conditional statement or one
 * transaction whose first write is fenced: beginning a refund marks the redemption with
 * the same conditions claim()'s takeover negates, so of a refund and a late delivery
 * exactly one wins, across processes; every later step names the refund and its attempt.
 */
import type { Kysely, Selectable } from 'kysely';
import type {
  BeginRefundResult,
  Chain,
  Refund,
  RefundCandidate,
  RefundHold,
  RefundRefusal,
  RefundRepo,
  RefundState,
} from '../store.ts';
import type { Backend } from './backend.ts';
import { checkMs, renewLease, takeOverLapsed, toFencedTransfer } from './fenced-rows.ts';
import { newId } from './ids.ts';
import { pageSize, toNum } from './rows.ts';
import type { Database, RedemptionsTable, RefundsTable } from './schema.ts';

type RefundRow = Selectable<RefundsTable>;
type RedemptionRow = Selectable<RedemptionsTable>;

const UNFINISHED: RefundState[] = ['open', 'sent'];
/** The redemption's mark while a refund is open or sent (payment-status.ts: 'refunding'). */
const MARK_REFUNDING = 'refunding';
const MARK_REFUNDED = 'refunded';
const MAX_ROUNDS = 4;

interface Meta {
  x402Version?: number;
  splits?: { recipientType?: string; amount?: string }[];
}

const metaOf = (r: Pick<RedemptionRow, 'meta'>): Meta => JSON.parse(r.meta) as Meta;

function toCandidate(r: RedemptionRow): RefundCandidate {
  return {
    id: r.id,
    chain: r.chain as Chain,
    network: r.network,
    txId: r.tx_id,
    payer: r.payer,
    state: r.state as RefundCandidate['state'],
    refundState: r.refund_state,
    leaseUntilMs: toNum(r.lease_until_ms),
    amount: BigInt(r.amount ?? 0),
    fee: BigInt(r.fee ?? 0),
    projectId: r.project_id,
    endpointId: r.endpoint_id,
    x402Version: metaOf(r).x402Version === 2 ? 2 : 1,
    createdAtMs: toNum(r.created_at_ms),
  };
}

function toRefund(r: RefundRow): Refund {
  return {
    id: r.id,
    redemptionId: r.redemption_id,
    chain: r.chain as Chain,
    network: r.network,
    recipient: r.recipient,
    amount: BigInt(r.amount),
    providerKept: BigInt(r.provider_kept),
    payableId: r.payable_id,
    state: r.state as RefundState,
    ...toFencedTransfer(r),
    refundedAtMs: r.refunded_at_ms === null ? null : toNum(r.refunded_at_ms),
  };
}

/** Thrown inside begin's transaction to roll it back with a reason. */
class Refused extends Error {
  readonly reason: RefundRefusal;
  constructor(reason: RefundRefusal) {
    super(reason);
    this.reason = reason;
  }
}

export function refundRepo(backend: Backend): RefundRepo {
  const { db } = backend;

  async function refundOf(redemptionId: string): Promise<RefundRow | undefined> {
    return db.selectFrom('refunds').selectAll().where('redemption_id', '=', redemptionId).executeTakeFirst();
  }

  /** Why a redemption that was not marked cannot be refunded now. */
  function refusal(r: RedemptionRow, q: { nowMs: number; undeliveredBeforeMs: number }): RefundRefusal {
    if (r.state === 'delivered') return 'delivered';
    if (toNum(r.created_at_ms) >= q.undeliveredBeforeMs) return 'in_window';
    return 'leased';
  }

  /** The one fenced step: marks the redemption refunding, cancels a pending payable, inserts the refund. */
  async function mark(
    q: { redemptionId: string; nowMs: number; undeliveredBeforeMs: number; leaseMs: number },
    trx: Kysely<Database>,
  ): Promise<RefundRow | null> {
    const marked = await trx
      .updateTable('redemptions')
      .set({ refund_state: MARK_REFUNDING })
      .where('id', '=', q.redemptionId)
      .where('state', '!=', 'delivered')
      .where('refund_state', 'is', null)
      .where('created_at_ms', '<', q.undeliveredBeforeMs)
      // Nobody holds a live lease: exactly what claim()'s takeover requires, negated by the mark.
      .where((eb) =>
        eb.or([
          eb('state', '=', 'retryable'),
          eb.and([eb('state', '=', 'in_progress'), eb('lease_until_ms', '<', q.nowMs)]),
        ]),
      )
      .returningAll()
      .executeTakeFirst();
    if (!marked) return null;

    // A v2 payment's provider share not yet paid out is cancelled: the provider never had it.
    const cancelled = await trx
      .updateTable('payables')
      .set({ state: 'cancelled' })
      .where('redemption_id', '=', q.redemptionId)
      .where('state', '=', 'pending')
      .returning(['id'])
      .executeTakeFirst();
    let providerKept = 0n;
    if (!cancelled) {
      const payable = await trx
        .selectFrom('payables')
        .select(['state', 'amount'])
        .where('redemption_id', '=', q.redemptionId)
        .executeTakeFirst();
      if (payable?.state === 'paying') throw new Refused('payout_in_progress');
      if (payable?.state === 'paid') providerKept = BigInt(payable.amount);
      else if (!payable) {
        const meta = metaOf(marked);
        // A v1 payment paid the provider's split straight to the provider.
        if (meta.x402Version !== 2) {
          for (const s of meta.splits ?? []) {
            if (s.recipientType === 'provider') providerKept += BigInt(s.amount ?? '0');
          }
        }
      }
    }
    return trx
      .insertInto('refunds')
      .values({
        id: newId('rfd'),
        redemption_id: marked.id,
        chain: marked.chain,
        network: marked.network,
        recipient: marked.payer,
        amount: BigInt(marked.amount ?? 0).toString(),
        provider_kept: providerKept.toString(),
        payable_id: cancelled?.id ?? null,
        state: 'open',
        attempt: 1,
        lease_until_ms: q.nowMs + q.leaseMs,
        tx: null,
        tx_bytes: null,
        tx_expiry: null,
        error: null,
        created_at_ms: q.nowMs,
        updated_at_ms: q.nowMs,
        refunded_at_ms: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  function fenced(hold: RefundHold, states: RefundState[], trx: Kysely<Database> = db) {
    return trx
      .updateTable('refunds')
      .where('id', '=', hold.id)
      .where('attempt', '=', hold.attempt)
      .where('state', 'in', states);
  }

  return {
    async undelivered(q) {
      checkMs('createdBeforeMs', q.createdBeforeMs);
      let query = db
        .selectFrom('redemptions')
        .selectAll()
        .where('state', '!=', 'delivered')
        .where('refund_state', 'is', null)
        .where('created_at_ms', '<', q.createdBeforeMs);
      if (q.chain) query = query.where('chain', '=', q.chain);
      if (q.network) query = query.where('network', '=', q.network);
      const rows = await query
        .orderBy('created_at_ms')
        .orderBy('id')
        .limit(pageSize(q.limit, 10_000))
        .execute();
      return rows.map(toCandidate);
    },

    async candidate(redemptionId) {
      const r = await db
        .selectFrom('redemptions')
        .selectAll()
        .where('id', '=', redemptionId)
        .executeTakeFirst();
      return r ? toCandidate(r) : null;
    },

    async begin(q): Promise<BeginRefundResult> {
      checkMs('nowMs', q.nowMs);
      checkMs('undeliveredBeforeMs', q.undeliveredBeforeMs);
      if (!Number.isSafeInteger(q.leaseMs) || q.leaseMs <= 0)
        throw new RangeError('leaseMs must be positive');
      for (let round = 0; round < MAX_ROUNDS; round++) {
        let begun: RefundRow | null;
        try {
          begun = await db.transaction().execute((trx) => mark(q, trx));
        } catch (e) {
          if (e instanceof Refused) return { kind: 'refused', reason: e.reason };
          throw e;
        }
        if (begun) return { kind: 'begun', refund: toRefund(begun) };

        const r = await db
          .selectFrom('redemptions')
          .selectAll()
          .where('id', '=', q.redemptionId)
          .executeTakeFirst();
        if (!r) return { kind: 'refused', reason: 'not_found' };
        if (r.refund_state === null) {
          const why = refusal(r, q);
          // The row may have been freed between the two reads: a released lease is worth one more round.
          if (why !== 'leased' || round === MAX_ROUNDS - 1) return { kind: 'refused', reason: why };
          const free =
            r.state === 'retryable' || (r.state === 'in_progress' && toNum(r.lease_until_ms) < q.nowMs);
          if (!free) return { kind: 'refused', reason: why };
          continue;
        }
        const existing = await refundOf(q.redemptionId);
        // Marked in the same transaction that inserts the refund: a mark without one is not ours.
        if (!existing) return { kind: 'refused', reason: 'not_found' };
        if (existing.state === 'refunded') return { kind: 'refunded', refund: toRefund(existing) };
        if (toNum(existing.lease_until_ms) >= q.nowMs) return { kind: 'busy', refund: toRefund(existing) };
        const taken = await takeOverLapsed(db, 'refunds', existing, q);
        if (taken) return { kind: 'recover', refund: toRefund(taken) };
        // Another run took it over or finished it first: look again.
      }
      const last = await refundOf(q.redemptionId);
      if (last) return { kind: last.state === 'refunded' ? 'refunded' : 'busy', refund: toRefund(last) };
      return { kind: 'refused', reason: 'leased' };
    },

    async byRedemption(redemptionId) {
      const r = await refundOf(redemptionId);
      return r ? toRefund(r) : null;
    },

    async unfinished(q) {
      let query = db.selectFrom('refunds').selectAll().where('state', 'in', UNFINISHED);
      if (q.chain) query = query.where('chain', '=', q.chain);
      if (q.network) query = query.where('network', '=', q.network);
      const rows = await query.orderBy('created_at_ms').orderBy('id').execute();
      return rows.map(toRefund);
    },

    renew: (hold, leaseUntilMs, nowMs) => renewLease(db, 'refunds', hold, leaseUntilMs, nowMs),

    async recordSent(hold, sent) {
      const r = await fenced(hold, ['open'])
        .set({
          state: 'sent',
          tx: sent.tx,
          tx_bytes: sent.txBytes,
          tx_expiry: sent.txExpiry,
          error: null,
          updated_at_ms: sent.nowMs,
        })
        .executeTakeFirst();
      return r.numUpdatedRows === 1n;
    },

    async finish(hold, nowMs) {
      return db.transaction().execute(async (trx) => {
        const done = await fenced(hold, ['sent'], trx)
          .set({ state: 'refunded', refunded_at_ms: nowMs, updated_at_ms: nowMs, error: null })
          .returning(['redemption_id'])
          .executeTakeFirst();
        if (!done) return false;
        await trx
          .updateTable('redemptions')
          .set({ refund_state: MARK_REFUNDED })
          .where('id', '=', done.redemption_id)
          .execute();
        return true;
      });
    },

    async reopen(hold, error, nowMs) {
      const r = await fenced(hold, UNFINISHED)
        .set({
          state: 'open',
          tx: null,
          tx_bytes: null,
          tx_expiry: null,
          error,
          lease_until_ms: 0,
          updated_at_ms: nowMs,
        })
        .executeTakeFirst();
      return r.numUpdatedRows === 1n;
    },

    async release(hold, error, nowMs) {
      const r = await fenced(hold, UNFINISHED)
        .set({ error, lease_until_ms: 0, updated_at_ms: nowMs })
        .executeTakeFirst();
      return r.numUpdatedRows === 1n;
    },
  };
}
