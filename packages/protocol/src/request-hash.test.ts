import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EMPTY_BODY_SHA256, sha256Hex } from './hash.ts';
import {
  computeRequestHash,
  type RequestHashInput,
  requestHasher,
  requestHashPreimage,
  requestHashPreimageCanonical,
} from './request-hash.ts';

interface Vector {
  name: string;
  body?: string;
  input: RequestHashInput;
  preimage: string;
  requestHash: string;
}
const vectors: Vector[] = JSON.parse(
  readFileSync(new URL('../docs/request-hash-vectors.json', import.meta.url), 'utf8'),
);

describe('computeRequestHash', () => {
  it('has vectors for every documented case', () => {
    expect(vectors.map((v) => v.name)).toEqual(
      expect.arrayContaining([
        'GET with a query string, one Solana option',
        'POST with a JSON body',
        'DELETE with an empty body',
        'free endpoint with a single platform split',
        'two accept options (Sui and Solana)',
      ]),
    );
  });

  it.each(vectors.map((v) => [v.name, v] as const))('matches the published vector: %s', (_name, v) => {
    expect(requestHashPreimage(v.input)).toBe(v.preimage);
    expect(computeRequestHash(v.input)).toBe(v.requestHash);
    // Independent recomputation: SHA-256 of the preimage bytes.
    expect(createHash('sha256').update(v.preimage).digest('hex')).toBe(v.requestHash);
    if (v.body !== undefined) expect(v.input.bodySha256).toBe(sha256Hex(v.body));
  });

  it('hashes an empty body as the SHA-256 of the empty string', () => {
    expect(sha256Hex('')).toBe(EMPTY_BODY_SHA256);
  });

  const base = vectors.find((v) => v.name.startsWith('two accept options'))!.input;
  const mutations: [string, (i: RequestHashInput) => RequestHashInput][] = [
    ['scheme', (i) => ({ ...i, scheme: 'exact' })],
    ['method', (i) => ({ ...i, method: 'PUT' })],
    ['path', (i) => ({ ...i, path: '/p/weather/v1/forecast2?units=metric' })],
    ['query string', (i) => ({ ...i, path: '/p/weather/v1/forecast?units=imperial' })],
    ['body hash', (i) => ({ ...i, bodySha256: sha256Hex('{"city":"Bergen","days":3}') })],
    ['price', (i) => ({ ...i, price: '10001' })],
    ['fee', (i) => ({ ...i, fee: '1001' })],
    ['nonce', (i) => ({ ...i, nonce: `${i.nonce}x` })],
    ['expiry', (i) => ({ ...i, expiresAt: '2026-11-22T12:25:01.000Z' })],
    ['chain', (i) => ({ ...i, accepts: i.accepts.map((a, k) => (k === 0 ? { ...a, chain: 'solana' } : a)) })],
    [
      'network',
      (i) => ({ ...i, accepts: i.accepts.map((a, k) => (k === 0 ? { ...a, network: 'localnet' } : a)) }),
    ],
    ['option order', (i) => ({ ...i, accepts: [...i.accepts].reverse() })],
    [
      'split recipient',
      (i) => ({
        ...i,
        accepts: i.accepts.map((a, k) =>
          k === 1
            ? {
                ...a,
                splits: a.splits.map((s, j) => (j === 0 ? { ...s, payTo: `${s.payTo.slice(0, -1)}X` } : s)),
              }
            : a,
        ),
      }),
    ],
    [
      'split amount',
      (i) => ({
        ...i,
        accepts: i.accepts.map((a, k) =>
          k === 1 ? { ...a, splits: a.splits.map((s, j) => (j === 1 ? { ...s, amount: '999' } : s)) } : a,
        ),
      }),
    ],
    [
      'split recipient type',
      (i) => ({
        ...i,
        accepts: i.accepts.map((a, k) =>
          k === 0
            ? {
                ...a,
                splits: a.splits.map((s, j) => (j === 0 ? { ...s, recipientType: 'platform' as const } : s)),
              }
            : a,
        ),
      }),
    ],
  ];

  it.each(mutations)('changes when the %s changes', (_field, mutate) => {
    expect(computeRequestHash(mutate(base))).not.toBe(computeRequestHash(base));
  });

  it('builds exactly the RFC 8785 canonical JSON, for any input', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 30 });
    const amount = fc.bigInt({ min: 0n, max: 10n ** 18n }).map((n) => n.toString());
    const split = fc.record({
      recipientType: fc.constantFrom('provider' as const, 'platform' as const),
      payTo: text,
      amount,
    });
    const input = fc.record({
      scheme: fc.constantFrom('exact_split' as const, 'exact' as const),
      method: fc.constantFrom('GET', 'post', 'Put', 'DELETE'),
      path: text,
      bodySha256: fc.stringMatching(/^[0-9a-fA-F]{64}$/),
      price: amount,
      fee: amount,
      accepts: fc.array(
        fc.record({ chain: text, network: text, asset: text, splits: fc.array(split, { maxLength: 3 }) }),
        { maxLength: 3 },
      ),
      nonce: text,
      expiresAt: text,
    });
    fc.assert(
      fc.property(input, (i) => requestHashPreimage(i) === requestHashPreimageCanonical(i)),
      { numRuns: 500 },
    );
  });

  it('gives the same hash through requestHasher (a quote written once) as through computeRequestHash', () => {
    const text = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 30 }),
      fc.string({ unit: 'binary', maxLength: 30 }),
    );
    const amount = fc.bigInt({ min: 0n, max: 10n ** 18n });
    const split = fc.record({
      recipientType: fc.constantFrom('provider' as const, 'platform' as const),
      payTo: text,
      amount: fc.oneof(
        amount,
        amount.map((n) => n.toString()),
      ),
    });
    const quoted = fc.record({
      scheme: fc.constantFrom('exact_split' as const, 'exact' as const),
      price: amount,
      fee: amount.map((n) => n.toString()),
      accepts: fc.array(
        fc.record({ chain: text, network: text, asset: text, splits: fc.array(split, { maxLength: 3 }) }),
        { maxLength: 3 },
      ),
    });
    const perRequest = fc.record({
      method: fc.constantFrom('GET', 'post', 'Put', 'DELETE'),
      path: text,
      // Two hashes often: a hasher keeps the last body hash's and method's text (they repeat).
      bodySha256: fc.oneof(
        fc.stringMatching(/^[0-9a-fA-F]{64}$/),
        fc.constantFrom('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'AB'.repeat(32)),
      ),
      nonce: text,
      expiresAt: text,
    });
    fc.assert(
      fc.property(quoted, fc.array(perRequest, { minLength: 1, maxLength: 8 }), (q, rs) => {
        const hasher = requestHasher(q);
        return rs.every(
          (r) =>
            hasher(r) === computeRequestHash({ ...q, ...r }) &&
            hasher(r) === sha256Hex(requestHashPreimageCanonical({ ...q, ...r })),
        );
      }),
      { numRuns: 300 },
    );
    for (const v of vectors) expect(requestHasher(v.input)(v.input)).toBe(v.requestHash);
  });

  it('hashes bytes and strings as SHA-256 of their (UTF-8) bytes', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 300 }),
        fc.string({ unit: 'grapheme', maxLength: 100 }),
        (bytes, text) => {
          expect(sha256Hex(bytes)).toBe(createHash('sha256').update(bytes).digest('hex'));
          expect(sha256Hex(Buffer.from(bytes))).toBe(createHash('sha256').update(bytes).digest('hex'));
          expect(sha256Hex(text)).toBe(createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex'));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('treats the method case-insensitively and amounts as atomic integers', () => {
    expect(computeRequestHash({ ...base, method: 'post' })).toBe(computeRequestHash(base));
    expect(computeRequestHash({ ...base, price: 10000n })).toBe(computeRequestHash(base));
    expect(() => computeRequestHash({ ...base, price: '0.01' })).toThrow(TypeError);
  });
});
