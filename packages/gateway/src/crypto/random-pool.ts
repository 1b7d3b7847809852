/**
 * Random text from a pooled buffer: one randomFillSync per 4 KB instead of a Buffer and a
 * call into the crypto binding per value (`randomBytes(8)` cost 3–8 µs on the bench VM, a
 * redemption id per paid request and a nonce per 402; Node itself reads the kernel's
 * randomness in large blocks either way). Every byte is handed out once; the pool is refilled
 * in place, and each value is copied out as a string, so nothing keeps a view of it.
 * For identifiers and nonces, not for keys: the pool keeps recent values in memory.
 */
import { randomFillSync } from 'node:crypto';

const POOL = 4096;
const pool = Buffer.alloc(POOL);
let at = POOL;

/** `bytes` fresh random bytes (at most 4096) as hex or base64url text. */
export function randomText(bytes: number, encoding: 'hex' | 'base64url'): string {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > POOL)
    throw new RangeError(`randomText: ${bytes} bytes`);
  if (at + bytes > POOL) {
    randomFillSync(pool);
    at = 0;
  }
  const text = pool.toString(encoding, at, at + bytes);
  at += bytes;
  return text;
}

/** Lower-case hex digits as character codes. */
const HEX = Buffer.from('0123456789abcdef', 'latin1');
/** Where each of a UUID's 16 bytes puts its two digits in `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`. */
const UUID_DIGITS = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
/** A UUID's text behind each prefix asked for, written over on every call. */
const uuidScratch = new Map<string, Buffer>();

/**
 * `prefix` and a random (version 4) UUID, as `${prefix}${crypto.randomUUID()}` would read: 16
 * bytes of the pool written as hex into a scratch text and copied out as one string. The
 * stock call builds its text from 20 concatenations (some 600 bytes of heap per id, against
 * 60 here, and about twice the time); every request without a usable `x-request-id` gets one.
 * `prefix` must be printable ASCII.
 */
export function randomUuid(prefix = ''): string {
  let text = uuidScratch.get(prefix);
  if (text === undefined) {
    if (!/^[\x20-\x7e]*$/.test(prefix))
      throw new RangeError('randomUuid: the prefix must be printable ASCII');
    text = Buffer.from(`${prefix}00000000-0000-4000-8000-000000000000`, 'latin1');
    uuidScratch.set(prefix, text);
  }
  if (at + 16 > POOL) {
    randomFillSync(pool);
    at = 0;
  }
  const base = prefix.length;
  for (let i = 0; i < 16; i++) {
    let b = pool[at + i] as number;
    // RFC 9562 §5.4: the version (4) in byte 6's high nibble, the variant (10) in byte 8's top bits.
    if (i === 6) b = (b & 0x0f) | 0x40;
    else if (i === 8) b = (b & 0x3f) | 0x80;
    const d = base + (UUID_DIGITS[i] as number);
    text[d] = HEX[b >> 4] as number;
    text[d + 1] = HEX[b & 15] as number;
  }
  at += 16;
  return text.toString('latin1');
}
