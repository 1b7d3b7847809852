import { describe, expect, it, vi } from 'vitest';
import { randomText, randomUuid } from './random-pool.ts';

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

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The text crypto.randomUUID writes for these 16 bytes (RFC 9562: version 4, variant 10). */
function uuidOf(bytes: Buffer): string {
  const b = Buffer.from(bytes);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

describe('randomUuid', () => {
  it('gives a version 4 UUID behind the prefix, as crypto.randomUUID reads', () => {
    expect(randomUuid()).toMatch(UUID_V4);
    const id = randomUuid('req_');
    expect(id.startsWith('req_')).toBe(true);
    expect(id.slice(4)).toMatch(UUID_V4);
  });

  it('never repeats an id, across refills and prefixes', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const id = i % 2 ? randomUuid('req_') : `req_${randomUuid()}`;
      expect(id.slice(4)).toMatch(UUID_V4);
      seen.add(id);
    }
    expect(seen.size).toBe(3000);
  });

  it('writes each byte of the pool into its own two digits', async () => {
    // Each fill is a counting sequence: every id must be the UUID of the 16 bytes it was handed.
    vi.resetModules();
    let fills = 0;
    const filled: Buffer[] = [];
    vi.doMock('node:crypto', async (original) => ({
      ...(await original<typeof import('node:crypto')>()),
      randomFillSync: (b: Buffer) => {
        fills++;
        for (let i = 0; i < b.length; i++) b[i] = (i * 7 + fills * 13) & 0xff;
        filled.push(Buffer.from(b));
        return b;
      },
    }));
    try {
      const pool = await import('./random-pool.ts');
      for (let i = 0; i < 600; i++) {
        const id = pool.randomUuid('x-');
        const fill = filled.at(-1)!;
        const at = (i * 16) % 4096;
        expect(id).toBe(`x-${uuidOf(fill.subarray(at, at + 16))}`);
      }
      expect(fills).toBe(3);
    } finally {
      vi.doUnmock('node:crypto');
      vi.resetModules();
    }
  });

  it('refuses a prefix that is not printable ASCII', () => {
    for (const bad of ['é', '\n', 'a\u0000']) expect(() => randomUuid(bad)).toThrow(RangeError);
  });
});
