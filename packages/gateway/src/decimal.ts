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

/**
 * JSON.stringify is a call into V8's C++ runtime, about 100–130 ns even for a short number, and
 * a 402 writes five (its token's two times, its Content-Length, the access line's status and
 * duration): the integers a request writes are looked up instead. 0–999 from a table made once;
 * a larger one is its thousands' text, kept for the thousands written lately (a timestamp in
 * ms changes its thousands once a second), and its last three digits from a table. Each slot's
 * text is written once and survives, and what is joined per call is young: no number-string
 * cache (decimal.test.ts checks both).
 */
const BELOW_THOUSAND: readonly string[] = Array.from({ length: 1000 }, (_, i) => JSON.stringify(i));
const THREE_DIGITS: readonly string[] = Array.from({ length: 1000 }, (_, i) =>
  JSON.stringify(i).padStart(3, '0'),
);
/** Eight slots, by the thousands' lowest three bits: the two times a 402 writes fall in two. */
const SLOTS = 8;
const slotThousands = new Float64Array(SLOTS).fill(-1);
const slotText: string[] = new Array<string>(SLOTS).fill('');

/** `String(n)`, byte for byte, without V8's number-string cache. */
export function decimal(n: number): string {
  if (Number.isSafeInteger(n) && n >= 0) {
    if (n < 1000) return BELOW_THOUSAND[n] as string;
    // Exact for any safe integer: n / 1000 is below 2^44, where doubles are at most 2^-9 apart,
    // so rounding the quotient (by at most 2^-10) never lifts its fraction (≤ 0.999) to the next
    // integer (decimal.test.ts tries the largest). `%` would cost a call into C per number.
    const thousands = Math.floor(n / 1000);
    const below = n - thousands * 1000;
    // `%`, not `&`: the thousands of a timestamp in ms exceed 32 bits. (By the power of two it
    // counts the same as the floor form above: 84,930 against 84,818 instructions a 402.)
    const slot = thousands % SLOTS;
    if (slotThousands[slot] !== thousands) {
      slotThousands[slot] = thousands;
      slotText[slot] = JSON.stringify(thousands);
    }
    return (slotText[slot] as string) + (THREE_DIGITS[below] as string);
  }
  // JSON has no NaN or Infinity (it writes null): those keep String's text.
  return Number.isFinite(n) ? JSON.stringify(n) : String(n);
}
