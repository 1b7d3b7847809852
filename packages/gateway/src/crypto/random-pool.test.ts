import { describe, expect, it } from 'vitest';
import { randomText } from './random-pool.ts';

describe('randomText', () => {
  it('gives text of the asked length in the asked encoding', () => {
    expect(randomText(8, 'hex')).toMatch(/^[0-9a-f]{16}$/);
    expect(randomText(16, 'base64url')).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('never repeats a value across refills of the pool', () => {
    // 2000 × 16 bytes is almost eight pools: every refill boundary is crossed, odd sizes included.
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) seen.add(randomText(i % 3 === 0 ? 13 : 16, 'hex'));
    expect(seen.size).toBe(2000);
  });

  it('refuses a size the pool cannot give', () => {
    for (const bad of [0, -1, 1.5, 4097]) expect(() => randomText(bad, 'hex')).toThrow(RangeError);
  });
});
