import { describe, expect, it, vi } from 'vitest';
import { randomText } from './random-pool.ts';

describe('randomText', () => {
  it('gives text of the asked length in the asked encoding', () => {
    expect(randomText(8, 'hex')).toMatch(/^[0-9a-f]{16}$/);
    expect(randomText(16, 'base64url')).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('never repeats a value across refills of the pool', () => {
    // 2000 × 16 bytes is almost eight pools: every refill boundary is crossed, odd sizes included.
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const size = i % 3 === 0 ? 13 : 16;
      const value = randomText(size, 'hex');
      expect(value).toHaveLength(size * 2);
      seen.add(value);
    }
    expect(seen.size).toBe(2000);
  });

  it('hands out each byte of a fill once, and no value across two fills', async () => {
    // Each fill writes its own number into every byte: a value's bytes say which fill it came from.
    vi.resetModules();
    let fills = 0;
    vi.doMock('node:crypto', async (original) => ({
      ...(await original<typeof import('node:crypto')>()),
      randomFillSync: (b: Buffer) => b.fill(++fills),
    }));
    try {
      const { randomText: fromFills } = await import('./random-pool.ts');
      const handedOut = new Map<number, number>();
      for (let i = 0; i < 2000; i++) {
        const size = i % 3 === 0 ? 13 : 8;
        const value = Buffer.from(fromFills(size, 'hex'), 'hex');
        expect(value).toHaveLength(size);
        expect(new Set(value).size).toBe(1);
        handedOut.set(value[0]!, (handedOut.get(value[0]!) ?? 0) + size);
      }
      expect(fills).toBeGreaterThan(3);
      for (const bytes of handedOut.values()) expect(bytes).toBeLessThanOrEqual(4096);
    } finally {
      vi.doUnmock('node:crypto');
      vi.resetModules();
    }
  });

  it('refuses a size the pool cannot give', () => {
    for (const bad of [0, -1, 1.5, 4097]) expect(() => randomText(bad, 'hex')).toThrow(RangeError);
  });
});
