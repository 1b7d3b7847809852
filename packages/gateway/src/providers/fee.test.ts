import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { platformFee } from './fee.ts';

describe('platformFee', () => {
  it('charges the basis points of the price when above the minimum', () => {
    expect(platformFee(1_000_000n, { feeBps: 100, feeMin: 1_000n })).toBe(10_000n);
  });

  it('rounds a fractional atomic unit up', () => {
    expect(platformFee(10_001n, { feeBps: 100, feeMin: 0n })).toBe(101n);
    expect(platformFee(1n, { feeBps: 1, feeMin: 0n })).toBe(1n);
  });

  it('never charges less than the minimum, even for a free endpoint', () => {
    expect(platformFee(10_000n, { feeBps: 100, feeMin: 1_000n })).toBe(1_000n);
    expect(platformFee(0n, { feeBps: 100, feeMin: 1_000n })).toBe(1_000n);
    expect(platformFee(0n, { feeBps: 100, feeMin: 0n })).toBe(0n);
  });

  it('is the smallest amount at or above both the proportional share and the minimum', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 15n }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.bigInt({ min: 0n, max: 10n ** 7n }),
        (price, feeBps, feeMin) => {
          const fee = platformFee(price, { feeBps, feeMin });
          const bps = BigInt(feeBps);
          expect(fee >= feeMin).toBe(true);
          expect(fee * 10_000n >= price * bps).toBe(true);
          if (fee > feeMin) expect((fee - 1n) * 10_000n < price * bps).toBe(true);
        },
      ),
    );
  });

  it('rejects a negative price', () => {
    expect(() => platformFee(-1n, { feeBps: 100, feeMin: 0n })).toThrow(RangeError);
  });
});
