/**
 * What a payment looks like to its provider and its payer (issue 13): one status per
 * redemption, derived from the settlement state, the refund mark and the time since it
 * was paid. The one definition the payments pages, the undelivered lists and the refund
 * command share.
 */
import type { PaymentStatusFilter, Redemption } from '../store/store.ts';

/** Each status is described where the store declares it (store.ts): the lists filter by the same set. */
export type PaymentStatus = PaymentStatusFilter;

export const PAYMENT_STATUSES: readonly PaymentStatus[] = [
  'delivered',
  'replayed',
  'retryable',
  'undelivered',
  'refunding',
  'refunded',
];

type StatusFacts = Pick<Redemption, 'state' | 'replays' | 'refundState' | 'createdAtMs'>;

export function paymentStatus(r: StatusFacts, nowMs: number, undeliveredAfterMs: number): PaymentStatus {
  if (r.state === 'delivered') return r.replays > 0 ? 'replayed' : 'delivered';
  if (r.refundState === 'refunded') return 'refunded';
  if (r.refundState !== null) return 'refunding';
  return nowMs - r.createdAtMs >= undeliveredAfterMs ? 'undelivered' : 'retryable';
}

/** Payments created before this time and still not delivered are undelivered at `nowMs`. */
export function undeliveredBefore(nowMs: number, undeliveredAfterMs: number): number {
  return nowMs - undeliveredAfterMs;
}
