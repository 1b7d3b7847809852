/**
 * Shared by the repositories of platform-wallet transfers (payable-repo.ts: payouts,
 * refund-repo.ts: refunds) and the ledger read (ledger-repo.ts): the row mappers of
 * their common lease, fence and recorded-transaction columns, the lease takeover and
 * renewal statements (the same on both tables), and the time check.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Chain, FencedHold, FencedTransfer, Payout, PayoutState } from '../store.ts';
import { toNum } from './rows.ts';
import type { Database, FencedTransferColumns, PayoutsTable } from './schema.ts';

/** States in which a payout or refund may still move money: its lease decides who acts on it. */
const UNFINISHED = ['open', 'sent'];

/** Either table, seen through the columns they share (the statement below is the same for both). */
type FencedDb = Kysely<{ fenced: FencedTransferColumns & { id: string } }>;

export function checkMs(name: string, v: number): void {
  if (!Number.isSafeInteger(v)) throw new RangeError(`${name} must be an integer number of milliseconds`);
}

/**
 * Takes over an unfinished payout or refund whose lease lapsed (its run died): one
 * conditional UPDATE that bumps the attempt, so of two runs at most one wins it and the
 * loser's later steps, fenced by the old attempt, change nothing. Undefined if it lost.
 */
export async function takeOverLapsed<T extends 'payouts' | 'refunds'>(
  db: Kysely<Database>,
  table: T,
  row: FencedHold,
  q: { nowMs: number; leaseMs: number },
): Promise<Selectable<Database[T]> | undefined> {
  const taken = await (db as unknown as FencedDb)
    .updateTable(table as unknown as 'fenced')
    .set((eb) => ({
      attempt: eb('attempt', '+', 1),
      lease_until_ms: q.nowMs + q.leaseMs,
      updated_at_ms: q.nowMs,
    }))
    .where('id', '=', row.id)
    .where('attempt', '=', row.attempt)
    .where('state', 'in', UNFINISHED)
    .where('lease_until_ms', '<', q.nowMs)
    .returningAll()
    .executeTakeFirst();
  return taken as Selectable<Database[T]> | undefined;
}

/** Extends the lease of an unfinished payout or refund this run still holds; false when the hold is stale. */
export async function renewLease(
  db: Kysely<Database>,
  table: 'payouts' | 'refunds',
  hold: FencedHold,
  leaseUntilMs: number,
  nowMs: number,
): Promise<boolean> {
  const r = await (db as unknown as FencedDb)
    .updateTable(table as unknown as 'fenced')
    .set({ lease_until_ms: leaseUntilMs, updated_at_ms: nowMs })
    .where('id', '=', hold.id)
    .where('attempt', '=', hold.attempt)
    .where('state', 'in', UNFINISHED)
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}

export function toFencedTransfer(r: Selectable<FencedTransferColumns>): FencedTransfer {
  return {
    attempt: r.attempt,
    leaseUntilMs: toNum(r.lease_until_ms),
    tx: r.tx,
    txBytes: r.tx_bytes,
    txExpiry: r.tx_expiry,
    error: r.error,
    createdAtMs: toNum(r.created_at_ms),
    updatedAtMs: toNum(r.updated_at_ms),
  };
}

export function toPayout(r: Selectable<PayoutsTable>): Payout {
  return {
    id: r.id,
    chain: r.chain as Chain,
    network: r.network,
    state: r.state as PayoutState,
    ...toFencedTransfer(r),
  };
}
