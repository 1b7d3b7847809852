import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { oldBytesPerCall } from '../test/support/old-generation.ts';
import { decimal } from './decimal.ts';

describe('decimal', () => {
  it('writes what String writes, for every number', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer(), fc.maxSafeInteger(), fc.constant(-0)), (n) => {
        expect(decimal(n)).toBe(String(n));
      }),
      { numRuns: 5000 },
    );
    // Every integer below two thousand (the table, and the first slot of thousands), the edges
    // of the three digits, and timestamps whose thousands share a slot.
    for (let n = 0; n < 2000; n++) expect(decimal(n)).toBe(String(n));
    const ms = 1_800_000_000_000;
    for (const n of [
      ms,
      ms + 1,
      ms + 999,
      ms + 1000,
      ms + 8000,
      ms + 8999,
      ms + 300_000,
      ms,
      10 ** 15,
      2 ** 53 - 1,
      2 ** 53 - 2,
      9_007_199_254_739_999,
      2 ** 53,
    ])
      expect(decimal(n)).toBe(String(n));
    for (const n of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e21, 1e-7, 0.1 + 0.2])
      expect(decimal(n)).toBe(String(n));
  });

  it('leaves a new number’s text young, where String(n) puts it in the old generation', () => {
    // Timestamps as a 402 writes them: each a number this process has not written before.
    const young = oldBytesPerCall((i) => decimal(1_800_000_000_000 + i * 7919), 20_000);
    const cached = oldBytesPerCall((i) => `${1_900_000_000_000 + i * 7919}`, 20_000);
    expect(young).toBeLessThan(2);
    // Why this exists: V8's number-string cache tenures every string it misses.
    expect(cached).toBeGreaterThan(16);
  });
});
