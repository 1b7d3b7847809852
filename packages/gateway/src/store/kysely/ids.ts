import { randomText } from '../../crypto/random-pool.ts';

let lastMs = 0;
let seq = 0;

/**
 * A prefixed random id that sorts by creation time within a process (time, then a
 * counter, then 64 random bits), so "newest first" lists can page by id alone.
 */
export function newId(prefix: string): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    seq = 0;
  } else if (++seq > 0xffff) {
    // Clock went back or 65536 ids in one millisecond: borrow the next millisecond.
    lastMs += 1;
    seq = 0;
  }
  const time = lastMs.toString(16).padStart(12, '0');
  return `${prefix}_${time}${seq.toString(16).padStart(4, '0')}${randomText(8, 'hex')}`;
}
