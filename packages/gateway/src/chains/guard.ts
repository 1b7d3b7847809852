/**
 * Forged proofs must be cheap to reject (issue 10, item 7). A proof naming a random
 * transaction id costs a chain lookup (two RPC calls on Solana), so this guard sits
 * between `decide` and an adapter's TransactionSource, per chain:
 *
 * - a short negative cache: an id the chain said it does not know (`null`, i.e. the
 *   `pending`/`not_found` verdict) is answered from memory for a moment, so repeats
 *   cost no RPC. Only `not_found` is remembered: never a found transaction (final or
 *   not), never a failed lookup;
 * - one lookup per id in flight: concurrent proofs naming the same id share it;
 * - a cap on lookups in flight: past it a lookup fails at once with
 *   ChainUnavailableError (the gate's `503 verification_unavailable` with
 *   Retry-After), so a flood of distinct ids never floods the RPC node.
 */
import type { ChainId, ChainVerifier, ObservedTransaction, TransactionSource } from './chain.ts';
import { ChainUnavailableError, verifierFrom } from './chain.ts';

/** `rpc`: asked the node; `coalesced`: joined the same id's lookup in flight; `malformed`: not an id of this chain, nothing asked. */
export const LOOKUP_OUTCOMES = [
  'rpc',
  'coalesced',
  'negative_cache_hit',
  'over_capacity',
  'malformed',
] as const;
export type LookupOutcome = (typeof LOOKUP_OUTCOMES)[number];

/**
 * The negative cache must never outlive the `Retry-After` the gateway sends with
 * `409 payment_pending` (PENDING_RETRY_AFTER_SEC = 2 in payments/): the entry is made
 * before that answer leaves, so a payer whose transaction was not visible yet and who
 * waits as told always gets a fresh lookup. Raise this only with that constant.
 */
export const MAX_NEGATIVE_CACHE_TTL_MS = 2_000;
/** Below the maximum, so a client that rounds the wait down a little still misses the cache. */
export const DEFAULT_NEGATIVE_CACHE_TTL_MS = 1_500;
export const DEFAULT_NEGATIVE_CACHE_SIZE = 10_000;
export const DEFAULT_MAX_CONCURRENT_LOOKUPS = 64;

export interface LookupGuardOptions {
  /** Lookups in flight at once for this chain; one more fails fast with ChainUnavailableError. Default 64. */
  maxConcurrentLookups?: number;
  /** How long "the chain does not know this id" is remembered, ms; 0 = not at all. Default 1.5 s, at most 2 s. */
  negativeCacheTtlMs?: number;
  /** How many such ids are remembered; the oldest go first. Default 10,000. */
  negativeCacheSize?: number;
  /** Called once per lookup asked of the guard, with what became of it (for metrics). */
  onLookup?: (chain: ChainId, outcome: LookupOutcome) => void;
  /** Clock for the negative cache (tests). Default Date.now. */
  now?: () => number;
}

function checkOptions(
  o: Required<Pick<LookupGuardOptions, 'maxConcurrentLookups' | 'negativeCacheTtlMs' | 'negativeCacheSize'>>,
) {
  if (!(o.maxConcurrentLookups >= 1)) {
    throw new RangeError(`maxConcurrentLookups must be at least 1, got ${o.maxConcurrentLookups}`);
  }
  if (!(o.negativeCacheTtlMs >= 0 && o.negativeCacheTtlMs <= MAX_NEGATIVE_CACHE_TTL_MS)) {
    throw new RangeError(
      `negativeCacheTtlMs must be within 0..${MAX_NEGATIVE_CACHE_TTL_MS} (the payment_pending Retry-After), got ${o.negativeCacheTtlMs}`,
    );
  }
  if (!(o.negativeCacheSize >= 0)) {
    throw new RangeError(`negativeCacheSize must not be negative, got ${o.negativeCacheSize}`);
  }
}

/** Wraps a source: same chain, network and answers, at most the cost described above. */
export function guardSource(source: TransactionSource, opts: LookupGuardOptions = {}): TransactionSource {
  const maxConcurrentLookups = opts.maxConcurrentLookups ?? DEFAULT_MAX_CONCURRENT_LOOKUPS;
  const negativeCacheTtlMs = opts.negativeCacheTtlMs ?? DEFAULT_NEGATIVE_CACHE_TTL_MS;
  const negativeCacheSize = opts.negativeCacheSize ?? DEFAULT_NEGATIVE_CACHE_SIZE;
  checkOptions({ maxConcurrentLookups, negativeCacheTtlMs, negativeCacheSize });
  const now = opts.now ?? Date.now;
  const { chain } = source;
  const report = (outcome: LookupOutcome) => opts.onLookup?.(chain, outcome);

  /** id -> until when it is unknown. One TTL for all, so Map order is also expiry order. */
  const unknown = new Map<string, number>();
  const inFlight = new Map<string, Promise<ObservedTransaction | null>>();
  let active = 0;

  function rememberUnknown(id: string): void {
    if (negativeCacheTtlMs === 0 || negativeCacheSize === 0) return;
    const t = now();
    unknown.delete(id); // (re)inserted at the young end below
    // Drop what has expired at the old end, then the oldest while at the bound.
    for (const [oldest, until] of unknown) {
      if (until > t && unknown.size < negativeCacheSize) break;
      unknown.delete(oldest);
    }
    unknown.set(id, t + negativeCacheTtlMs);
  }

  function knownUnknown(id: string): boolean {
    const until = unknown.get(id);
    if (until === undefined) return false;
    if (now() < until) return true;
    unknown.delete(id);
    return false;
  }

  return {
    chain,
    network: source.network,
    sameAsset: (a, b) => source.sameAsset(a, b),
    ...(source.wellFormed ? { wellFormed: (id: string) => source.wellFormed!(id) } : {}),
    fetch(id) {
      if (source.wellFormed && !source.wellFormed(id)) {
        report('malformed');
        return Promise.resolve(null);
      }
      if (knownUnknown(id)) {
        report('negative_cache_hit');
        return Promise.resolve(null);
      }
      const shared = inFlight.get(id);
      if (shared) {
        report('coalesced');
        return shared;
      }
      if (active >= maxConcurrentLookups) {
        report('over_capacity');
        return Promise.reject(
          new ChainUnavailableError(
            chain,
            `${chain} verification is at capacity (${maxConcurrentLookups} lookups in flight)`,
          ),
        );
      }
      report('rpc');
      active++;
      let fetched: Promise<ObservedTransaction | null>;
      try {
        fetched = source.fetch(id);
      } catch (e) {
        fetched = Promise.reject(e);
      }
      // Promise callbacks never run synchronously: the set below always precedes the delete.
      const p: Promise<ObservedTransaction | null> = fetched
        .then((tx) => {
          if (tx === null) rememberUnknown(id);
          return tx;
        })
        .finally(() => {
          active--;
          if (inFlight.get(id) === p) inFlight.delete(id);
        });
      inFlight.set(id, p);
      return p;
    },
  };
}

/** The production composition: an adapter's source behind the guard, then the shared `decide`. */
export function guardedVerifier(source: TransactionSource, opts: LookupGuardOptions = {}): ChainVerifier {
  return verifierFrom(guardSource(source, opts));
}
