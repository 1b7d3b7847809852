/** Percentiles of raw samples (the store micro-bench times every call). */

/** Nearest-rank percentile (p in 0..100) of the finite values; NaN when there are none. */
export function percentile(xs: readonly number[], p: number): number {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * v.length);
  return v[Math.min(v.length, Math.max(1, rank)) - 1]!;
}
