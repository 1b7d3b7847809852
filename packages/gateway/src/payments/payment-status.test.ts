import { describe, expect, it } from 'vitest';
import { paymentStatus } from './payment-status.ts';

const base = { state: 'retryable' as const, replays: 0, refundState: null, createdAtMs: 1_000 };

describe('payment status', () => {
  it('is delivered once answered and replayed once served again', () => {
    expect(paymentStatus({ ...base, state: 'delivered' }, 5_000, 1_000)).toBe('delivered');
    expect(paymentStatus({ ...base, state: 'delivered', replays: 2 }, 5_000, 1_000)).toBe('replayed');
  });

  it('is retryable inside the window and undelivered from its end on', () => {
    expect(paymentStatus({ ...base, state: 'in_progress' }, 1_999, 1_000)).toBe('retryable');
    expect(paymentStatus(base, 2_000, 1_000)).toBe('undelivered');
  });

  it('follows the refund mark before the clock', () => {
    expect(paymentStatus({ ...base, refundState: 'sending' }, 9_000, 1_000)).toBe('refunding');
    expect(paymentStatus({ ...base, refundState: 'refunded' }, 9_000, 1_000)).toBe('refunded');
  });
});
