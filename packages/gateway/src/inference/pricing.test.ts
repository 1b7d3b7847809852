import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { affordableOutputTokens, perMillionAtomic, perTokenString, tokenPrice } from './pricing.ts';

describe('token pricing', () => {
  it('reads a per-token USDC price as atomic units per million tokens, exactly', () => {
    expect(perMillionAtomic('0.000002')).toBe(2_000_000n); // $2 per million tokens
    expect(perMillionAtomic('0.000000000001')).toBe(1n); // the smallest price the file allows
    expect(perMillionAtomic('0.00000015')).toBe(150_000n);
    expect(() => perMillionAtomic('0.0000000000001')).toThrow();
    expect(perTokenString(150_000n)).toBe('0.00000015');
  });

  it('quotes input × input price + output cap × output price, rounded up to one atomic unit', () => {
    const prices = { inputPerMillion: 3_000_000n, outputPerMillion: 15_000_000n };
    expect(tokenPrice(prices, 1000, 500)).toBe(3000n + 7500n);
    expect(tokenPrice({ inputPerMillion: 1n, outputPerMillion: 0n }, 1, 0)).toBe(1n);
    expect(tokenPrice({ inputPerMillion: 1_000_000n, outputPerMillion: 0n }, 0, 0)).toBe(0n);
    expect(tokenPrice({ inputPerMillion: 150_000n, outputPerMillion: 600_000n }, 7, 3)).toBe(3n); // 2.85 → 3
  });

  it('finds the largest output cap a paid price covers', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 9n }),
        fc.bigInt({ min: 1n, max: 10n ** 9n }),
        fc.nat(200_000),
        fc.nat(200_000),
        (inputPerMillion, outputPerMillion, input, output) => {
          const prices = { inputPerMillion, outputPerMillion };
          const paid = tokenPrice(prices, input, output);
          const n = affordableOutputTokens(prices, paid, input);
          expect(n).toBeGreaterThanOrEqual(output);
          expect(tokenPrice(prices, input, n)).toBeLessThanOrEqual(paid);
          expect(tokenPrice(prices, input, n + 1)).toBeGreaterThan(paid);
        },
      ),
    );
    expect(affordableOutputTokens({ inputPerMillion: 1_000_000n, outputPerMillion: 1n }, 5n, 6)).toBe(-1);
  });
});
