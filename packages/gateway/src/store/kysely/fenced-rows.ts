/**
 * Shared by the repositories of platform-wallet transfers (payable-repo.ts: payouts,
 * refund-repo.ts: refunds) and the ledger read (ledger-repo.ts): the row mappers of
 * their common lease, fence and recorded-transaction columns, and the time check.
 */
import type { Selectable } from 'kysely';
import type { Chain, FencedTransfer, Payout, PayoutState } from '../store.ts';
import { toNum } from './rows.ts';
import type { FencedTransferColumns, PayoutsTable } from './schema.ts';

export function checkMs(name: string, v: number): void {
  if (!Number.isSafeInteger(v)) throw new RangeError(`${name} must be an integer number of milliseconds`);
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
