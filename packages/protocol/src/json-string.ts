/**
 * A string's JSON text for hot paths (issue 14): `JSON.stringify(s)` for a string, byte for
 * byte. A short string with nothing JSON escapes (no `"`, `\`, control character or UTF-16
 * surrogate) is quoted as it is after a scan in JavaScript; anything else, and anything
 * longer than SCAN_MAX, goes to JSON.stringify. A call into V8's serializer costs about 1,000
 * instructions before its first character, the scan roughly 10–20 a character: cheaper for one
 * short string, not for several that one call can write together (the token's nonce and hash
 * cost 1,200 instructions more scanned than in one call; the request id's 40 characters 600
 * more). `bench:anatomy -- --instructions` decides each use. json-string.test.ts compares it
 * with JSON.stringify over every kind of character.
 */

/** Strings longer than this go to JSON.stringify, whose per-character cost is lower. */
const SCAN_MAX = 96;

export function jsonString(s: string): string {
  const n = s.length;
  if (n > SCAN_MAX) return JSON.stringify(s);
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    // JSON.stringify escapes `"` (0x22), `\` (0x5c), C0 controls and lone surrogates; a
    // surrogate of either kind sends the whole string there, which tells lone from paired.
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(s);
  }
  return `"${s}"`;
}
