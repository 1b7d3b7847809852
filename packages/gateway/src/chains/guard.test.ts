import { describe, expect, it } from 'vitest';
import type { ObservedTransaction, TransactionSource, VerifyInput } from './chain.ts';
import { ChainUnavailableError } from './chain.ts';
import type { LookupOutcome } from './guard.ts';
import {
  DEFAULT_MAX_CONCURRENT_LOOKUPS,
  DEFAULT_NEGATIVE_CACHE_TTL_MS,
  guardedVerifier,
  guardSource,
  MAX_NEGATIVE_CACHE_TTL_MS,
} from './guard.ts';

const FOUND: ObservedTransaction = {
  id: 'paid',
  final: true,
  success: true,
  timeMs: 1,
  signers: [],
  assetAuthorities: [],
  deltas: [],
  memos: [],
};

interface Pending {
  id: string;
  resolve(tx: ObservedTransaction | null): void;
  reject(e: unknown): void;
}

/** A source whose lookups wait until the test answers them; ids starting with `bad` are malformed. */
function fakeSource() {
  const asked: string[] = [];
  const open: Pending[] = [];
  const source: TransactionSource = {
    chain: 'sui',
    network: 'localnet',
    sameAsset: (a, b) => a === b,
    wellFormed: (id) => !id.startsWith('bad'),
    fetch(id) {
      asked.push(id);
      return new Promise((resolve, reject) => open.push({ id, resolve, reject }));
    },
  };
  /** Answers every open lookup: `paid` is found, anything else is unknown to the chain. */
  const answerAll = async () => {
    for (const p of open.splice(0)) p.resolve(p.id === 'paid' ? FOUND : null);
    await new Promise((r) => setImmediate(r));
  };
  return { source, asked, open, answerAll };
}

function guarded(opts: Parameters<typeof guardSource>[1] = {}) {
  const f = fakeSource();
  let now = 1_000;
  const outcomes: LookupOutcome[] = [];
  const source = guardSource(f.source, {
    now: () => now,
    onLookup: (chain, outcome) => {
      expect(chain).toBe('sui');
      outcomes.push(outcome);
    },
    ...opts,
  });
  /** Looks `id` up and answers at once. */
  const lookup = async (id: string) => {
    const p = source.fetch(id);
    await f.answerAll();
    return p;
  };
  return {
    ...f,
    source,
    outcomes,
    lookup,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('guardSource: the negative cache', () => {
  it('answers an id the chain did not know from memory for the window, then asks again', async () => {
    const g = guarded({ negativeCacheTtlMs: 1_500 });
    expect(await g.lookup('forged')).toBeNull();
    expect(await g.lookup('forged')).toBeNull();
    g.advance(1_499);
    expect(await g.lookup('forged')).toBeNull();
    expect(g.asked).toEqual(['forged']);
    g.advance(1);
    expect(await g.lookup('forged')).toBeNull();
    expect(g.asked).toEqual(['forged', 'forged']);
    expect(g.outcomes).toEqual(['rpc', 'negative_cache_hit', 'negative_cache_hit', 'rpc']);
  });

  it('never remembers a transaction the chain has, nor a failed lookup', async () => {
    const g = guarded();
    expect(await g.lookup('paid')).toBe(FOUND);
    expect(await g.lookup('paid')).toBe(FOUND);
    const failing = g.source.fetch('forged');
    g.open.splice(0)[0]!.reject(new ChainUnavailableError('sui', 'down'));
    await expect(failing).rejects.toBeInstanceOf(ChainUnavailableError);
    expect(await g.lookup('forged')).toBeNull();
    expect(g.asked).toEqual(['paid', 'paid', 'forged', 'forged']);
  });

  it('keeps at most negativeCacheSize ids, dropping the oldest first', async () => {
    const g = guarded({ negativeCacheSize: 3 });
    for (const id of ['a', 'b', 'c', 'd']) await g.lookup(id);
    g.asked.length = 0;
    for (const id of ['b', 'c', 'd', 'a']) await g.lookup(id);
    expect(g.asked).toEqual(['a']);
  });

  it('is off with a zero window', async () => {
    const g = guarded({ negativeCacheTtlMs: 0 });
    await g.lookup('forged');
    await g.lookup('forged');
    expect(g.asked).toEqual(['forged', 'forged']);
  });

  it('refuses a window longer than the Retry-After of payment_pending (2 s)', () => {
    expect(DEFAULT_NEGATIVE_CACHE_TTL_MS).toBeLessThanOrEqual(MAX_NEGATIVE_CACHE_TTL_MS);
    expect(MAX_NEGATIVE_CACHE_TTL_MS).toBeLessThanOrEqual(2_000);
    expect(() => guardSource(fakeSource().source, { negativeCacheTtlMs: 2_001 })).toThrow(RangeError);
    expect(() => guardSource(fakeSource().source, { negativeCacheTtlMs: -1 })).toThrow(RangeError);
  });
});

describe('guardSource: one lookup per id in flight', () => {
  it('lets concurrent lookups of one id share the answer (and its failure)', async () => {
    const g = guarded({ maxConcurrentLookups: 1 });
    const all = [g.source.fetch('paid'), g.source.fetch('paid'), g.source.fetch('paid')];
    await g.answerAll();
    expect(await Promise.all(all)).toEqual([FOUND, FOUND, FOUND]);
    const failing = [g.source.fetch('x'), g.source.fetch('x')];
    g.open.splice(0)[0]!.reject(new ChainUnavailableError('sui', 'down'));
    for (const p of failing) await expect(p).rejects.toBeInstanceOf(ChainUnavailableError);
    expect(g.asked).toEqual(['paid', 'x']);
    expect(g.outcomes).toEqual(['rpc', 'coalesced', 'coalesced', 'rpc', 'coalesced']);
  });
});

describe('guardSource: the cap on lookups in flight', () => {
  it('fails the lookup over the cap at once with ChainUnavailableError, without asking the chain', async () => {
    const g = guarded({ maxConcurrentLookups: 2 });
    const first = [g.source.fetch('a'), g.source.fetch('b')];
    const over = g.source.fetch('c');
    await expect(over).rejects.toBeInstanceOf(ChainUnavailableError);
    await expect(over).rejects.toMatchObject({ chain: 'sui' });
    expect(g.asked).toEqual(['a', 'b']);
    await g.answerAll();
    await Promise.all(first);
    expect(await g.lookup('c')).toBeNull();
    expect(g.outcomes).toEqual(['rpc', 'rpc', 'over_capacity', 'rpc']);
  });

  it('gives the slot back when a lookup fails', async () => {
    const g = guarded({ maxConcurrentLookups: 1 });
    const failing = g.source.fetch('a');
    g.open.splice(0)[0]!.reject(new Error('boom'));
    await expect(failing).rejects.toThrow('boom');
    expect(await g.lookup('b')).toBeNull();
  });

  it('answers a malformed id without a lookup or a slot', async () => {
    const g = guarded({ maxConcurrentLookups: 1 });
    const busy = g.source.fetch('a');
    expect(await g.source.fetch('bad id')).toBeNull();
    expect(g.asked).toEqual(['a']);
    await g.answerAll();
    await busy;
    expect(g.outcomes).toEqual(['rpc', 'malformed']);
  });

  it('refuses a cap below one', () => {
    expect(() => guardSource(fakeSource().source, { maxConcurrentLookups: 0 })).toThrow(RangeError);
  });
});

describe('guardedVerifier', () => {
  const input = (txHashOrDigest: string): VerifyInput => ({
    option: { chain: 'sui', network: 'localnet', asset: 'usdc', memo: 'm', splits: [] },
    issuedAtMs: 0,
    expiresAtMs: 1,
    skewMs: 0,
    payer: 'p',
    txHashOrDigest,
  });

  it('guards by default: a forged id costs one lookup, and 64 lookups at most are in flight', async () => {
    const f = fakeSource();
    const v = guardedVerifier(f.source);
    const first = v.verify(input('forged'));
    await f.answerAll();
    expect(await first).toEqual({ status: 'pending', reason: 'not_found' });
    expect(await v.verify(input('forged'))).toEqual({ status: 'pending', reason: 'not_found' });
    expect(f.asked).toEqual(['forged']);

    const inFlight = Array.from({ length: DEFAULT_MAX_CONCURRENT_LOOKUPS }, (_, i) =>
      v.verify(input(`t${i}`)),
    );
    await expect(v.verify(input('one-too-many'))).rejects.toBeInstanceOf(ChainUnavailableError);
    await f.answerAll();
    await Promise.all(inFlight);
  });
});
