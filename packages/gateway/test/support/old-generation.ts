/**
 * How many bytes a piece of hot-path code leaves in V8's old generation per call (issue 14):
 * garbage there is what brings mark-compacts, and their concurrent marking was the 402's
 * tail. Young garbage is free to a scavenge; this counts only what lands in old space.
 */
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (o?: { type: 'minor' | 'major' }) => void;
const oldSpace = () =>
  getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0;

/**
 * Old-space bytes kept per call of `call(i)` over `count` calls, after a warm-up of `count`
 * (so its code is compiled and its caches made first). A scavenge before and after moves
 * nothing young into the count: only what V8 allocated in the old generation itself (or a
 * scavenge promoted because something long-lived still held it) is counted.
 */
export function oldBytesPerCall(call: (i: number) => unknown, count: number): number {
  let sink = 0;
  for (let i = 0; i < count; i++) sink += call(-1 - i) === undefined ? 0 : 1;
  gc();
  gc({ type: 'minor' });
  const before = oldSpace();
  for (let i = 0; i < count; i++) sink += call(i) === undefined ? 0 : 1;
  gc({ type: 'minor' });
  if (sink < 0) throw new Error('unreachable');
  return (oldSpace() - before) / count;
}

/**
 * The same for asynchronous work (a request and its answer): old-space bytes kept per call of
 * `call` over `count` sequential calls, after a warm-up of `count`. A scavenge every `every`
 * calls, and its growth since the last one summed (a mark-compact in between only shrinks it):
 * an exchange lasts far less than `every` of them, so what one keeps in flight is not counted,
 * and what outlives it in a long-lived list (a timer waiting for its sweep) is. Measured four
 * times, the least kept: while a young process's heap grows, its scavenges come between the
 * counted ones and promote what they find in flight, now and then kilobytes per call; a cost of
 * the code itself is there in every pass.
 */
export async function oldBytesPerAsyncCall(
  call: () => Promise<unknown>,
  count: number,
  every = 100,
): Promise<number> {
  for (let i = 0; i < count; i++) await call();
  const once = async () => {
    gc();
    gc({ type: 'minor' });
    let last = oldSpace();
    let grown = 0;
    for (let i = 1; i <= count; i++) {
      await call();
      if (i % every === 0 || i === count) {
        gc({ type: 'minor' });
        const now = oldSpace();
        if (now > last) grown += now - last;
        last = now;
      }
    }
    return grown / count;
  };
  let least = await once();
  for (let pass = 1; pass < 4; pass++) least = Math.min(least, await once());
  return least;
}

/**
 * JavaScript-heap bytes still held per call after `count` calls of `call(i)` and a scavenge:
 * what a structure keeps alive on the heap (and every scavenge must copy), not its garbage.
 * No warm-up: `call` must not be the first use of a lazily made table.
 */
export function youngBytesKeptPerCall(call: (i: number) => unknown, count: number): number {
  gc();
  gc({ type: 'minor' });
  const before = getHeapStatistics().used_heap_size;
  for (let i = 0; i < count; i++) call(i);
  gc({ type: 'minor' });
  return (getHeapStatistics().used_heap_size - before) / count;
}
