/**
 * V8 tuning the gateway applies to its own process at startup (main.ts).
 *
 * Node 24's V8 (13.6) raised the young generation's maximum from 8 to 32 MB, and with it the
 * point at which it scavenges short-lived Buffers (each streamed chunk is one, its bytes
 * allocated outside the JavaScript heap): a streamed answer's chunks came to be reclaimed by
 * mark-compacts of the whole heap instead (nodejs/node#61967, #63863, confirmed).
 * - V8 started a full mark-compact for every 64 MB of external memory, before the scavenge's
 *   threshold was reached. Counting external memory in V8's global limit instead, which V8
 *   has since made its default, replaced that fixed trigger: in the bench's 256 KB scenario
 *   the gateway's CPU per response fell from 350-400 µs to 140-170 µs (docs/performance.md,
 *   fifth session).
 * - V8 scavenges when the young generation's Buffers reach twice its default maximum
 *   semi-space (scavenger_max_new_space_capacity_mb, times two without pointer compression):
 *   128 MB of them since 13.6, 32 MB before. A streamed answer allocates little on the heap,
 *   so that is what brings its scavenge; but in the gateway, whose heap is about 50 MB, the
 *   global limit usually comes first, after 70-170 MB of them, and V8 starts a mark-compact
 *   instead. Setting the flag back to Node 22's 8 at run time puts the scavenge back at 32 MB
 *   of Buffers. The main thread's young generation was configured before
 *   (--max-semi-space-size, below) and keeps its size; worker threads started later get
 *   V8's smaller default.
 *
 * And one that is not Node 24's doing but shows most under streaming load: the limit at which
 * V8 starts the next mark-compact, which it sets at each one from the heap that survived and
 * its estimates of the collector's and the program's speed. In the bench's traced runs the
 * limits fell between 62 and 214 MB for a heap of which 46-59 MB survived, and the low ones brought
 * mark-compacts every 200-300 ms while 256 KB answers streamed (3 to 22 a run). A fixed
 * growing factor of 2 (heap-growing-percent=100, as Go's GOGC=100) puts the limit at about
 * twice what the last mark-compact kept, plus the young generation, for the heap and for the
 * global size with its Buffers: about 50 MB of room at the gateway's size, and V8 no longer
 * tightens or widens it from its estimates, or under memory pressure (docs/performance.md,
 * fifteenth session).
 *
 * An operator who names one of these flags (either way) on node's command line keeps their
 * choice (V8 flags like these are not allowed in NODE_OPTIONS). A later V8 that drops one of
 * them would print "unrecognized flag" at each start: the version check below is the place
 * to stop setting it.
 */
import { setFlagsFromString } from 'node:v8';

/**
 * What the gateway's launch command gives node (`npm start`, the Dockerfile's CMD, the bench;
 * test/deploy/deploy-files.test.ts keeps them in step). A young generation of up to 64 MB per
 * semi-space (V8 picks 16 MB here): per-request objects die young instead of being promoted,
 * so the old generation fills, and pauses the loop for a major collection (14-18 ms stalls,
 * the 402 and forward tails), several times less often. It takes effect only at startup:
 * set at run time it only partly did (docs/performance.md, fifth session).
 */
export const NODE_LAUNCH_FLAGS = ['--max-semi-space-size=64'] as const;

/** Counts external memory (Buffers' bytes) in V8's global heap limit. */
export const EXTERNAL_MEMORY_FLAG = 'external-memory-accounted-in-global-limit';

/** Sets V8's scavenge for young Buffers at 32 MB of them (2 × 8 MB × 2), as before V8 13.6. */
export const YOUNG_BUFFERS_FLAG = 'scavenger-max-new-space-capacity-mb';
export const YOUNG_BUFFERS_MB = 8;

/** The next mark-compact's limit: (1 + this/100) times what the last one kept (plus the young generation). */
export const HEAP_GROWING_FLAG = 'heap-growing-percent';
export const HEAP_GROWING_PERCENT = 100;

export interface V8Runtime {
  /** `process.versions.v8`, e.g. "13.6.233.10-node.28". */
  v8Version: string;
  /** `process.execArgv`: node's own command-line options. */
  execArgv: readonly string[];
}

/**
 * One of these flags on node's command line, either way (`--no-…`, `--no…`, `--no_…`), with
 * dashes or underscores, with or without a value.
 */
function named(...flags: string[]): RegExp {
  const names = flags.map((f) => f.replaceAll('-', '[-_]')).join('|');
  return new RegExp(`^--(no[-_]?)?(${names})(=.*)?$`);
}

const TUNINGS = [
  { named: named(EXTERNAL_MEMORY_FLAG), set: `--${EXTERNAL_MEMORY_FLAG}` },
  { named: named(YOUNG_BUFFERS_FLAG), set: `--${YOUNG_BUFFERS_FLAG}=${YOUNG_BUFFERS_MB}` },
  // A predictable GC schedule sets the heap's growth itself.
  {
    named: named(HEAP_GROWING_FLAG, 'predictable-gc-schedule'),
    set: `--${HEAP_GROWING_FLAG}=${HEAP_GROWING_PERCENT}`,
  },
] as const;

/**
 * The flags to set for this runtime: none before V8 13.6 (or a version it cannot read), and
 * none the operator chose.
 */
export function v8TuningFlags(rt: V8Runtime): string[] {
  const [major, minor] = rt.v8Version.split('.').map((n) => Number.parseInt(n, 10));
  if (major === undefined || minor === undefined || !Number.isFinite(major) || !Number.isFinite(minor))
    return [];
  if (major < 13 || (major === 13 && minor < 6)) return [];
  return TUNINGS.filter((t) => !rt.execArgv.some((arg) => t.named.test(arg))).map((t) => t.set);
}

/** Applies v8TuningFlags to this process; returns what it set. */
export function tuneV8(): string[] {
  const flags = v8TuningFlags({ v8Version: process.versions.v8, execArgv: process.execArgv });
  for (const flag of flags) setFlagsFromString(flag);
  return flags;
}
