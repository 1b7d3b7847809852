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
