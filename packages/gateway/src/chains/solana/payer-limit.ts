/**
 * A sliding-window cap on how many distinct transactions one payer gets sponsored
 * (the fee payer pays every fee, so a payer must not be able to make it pay without
 * bound). Counted per distinct transaction: checking the same payment again is free.
 *
 * In memory and per process: with several gateway processes each has its own window,
 * so the effective cap is the cap times the number of processes.
 */

export interface PayerRateLimiterOptions {
  /** Distinct transactions one payer may have checked within the window. */
  maxPerWindow: number;
  /** Window length, ms. Default 60 s. */
  windowMs?: number;
  /**
   * How many payers are tracked at once; past it the least recently seen is forgotten
   * (its count starts over). Bounds memory against floods of fresh addresses. Default 100,000.
   */
  maxPayers?: number;
  /** Clock (tests). Default Date.now. */
  now?: () => number;
}

export interface PayerRateLimiter {
  /**
   * Counts transaction `key` for `payer` and says whether it is within the cap. A key
   * already counted in the window is allowed again without counting twice.
   */
  take(payer: string, key: string): boolean;
  /** Transactions counted for `payer` in the current window. */
  count(payer: string): number;
}

export const DEFAULT_RATE_WINDOW_MS = 60_000;
export const DEFAULT_MAX_TRACKED_PAYERS = 100_000;

export function createPayerRateLimiter(opts: PayerRateLimiterOptions): PayerRateLimiter {
  const { maxPerWindow } = opts;
  const windowMs = opts.windowMs ?? DEFAULT_RATE_WINDOW_MS;
  const maxPayers = opts.maxPayers ?? DEFAULT_MAX_TRACKED_PAYERS;
  const now = opts.now ?? Date.now;
  if (!(Number.isSafeInteger(maxPerWindow) && maxPerWindow >= 1)) {
    throw new RangeError(`maxPerWindow must be a positive integer, got ${maxPerWindow}`);
  }
  if (!(windowMs > 0)) throw new RangeError(`windowMs must be positive, got ${windowMs}`);
  if (!(Number.isSafeInteger(maxPayers) && maxPayers >= 1)) {
    throw new RangeError(`maxPayers must be a positive integer, got ${maxPayers}`);
  }

  /** payer -> (key -> when counted). Insertion order is time order in both maps (least recent payer first). */
  const payers = new Map<string, Map<string, number>>();

  function live(payer: string, t: number): Map<string, number> | undefined {
    const seen = payers.get(payer);
    if (!seen) return undefined;
    for (const [key, at] of seen) {
      if (at > t - windowMs) break;
      seen.delete(key);
    }
    return seen;
  }

  return {
    take(payer, key) {
      const t = now();
      let seen = live(payer, t);
      if (seen)
        payers.delete(payer); // re-inserted at the recent end below
      else seen = new Map();
      payers.set(payer, seen);
      while (payers.size > maxPayers) payers.delete(payers.keys().next().value!);
      if (seen.has(key)) return true;
      if (seen.size >= maxPerWindow) return false;
      seen.set(key, t);
      return true;
    },
    count(payer) {
      return live(payer, now())?.size ?? 0;
    },
  };
}
