/**
 * A number's decimal text for hot paths (issue 14, the 402's tail).
 *
 * `String(n)`, `` `${n}` `` and `n.toString()` go through V8's number-string cache, and V8
 * allocates the string of every cache miss directly in the old generation (the cache lives
 * there). So code that writes a new number on every request (a timestamp, an expiry) leaves
 * some 32 bytes of old-generation garbage per number, and those bring the mark-compacts
 * whose concurrent marking was the 402 scenario's p99: two timestamps per 402 whose cache
 * slots collided made the old generation grow about 185 KB between two scavenges, against
 * 14 KB without (docs/performance.md, twelfth session). JSON.stringify's serializer writes
 * the same digits without the cache, into a young string: decimal.test.ts checks both the
 * text and where it is allocated.
 */

/** `String(n)`, byte for byte, without V8's number-string cache. */
export function decimal(n: number): string {
  // JSON has no NaN or Infinity (it writes null): those keep String's text.
  return Number.isFinite(n) ? JSON.stringify(n) : String(n);
}
