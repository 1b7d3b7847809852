/**
 * V8 tuning the gateway applies to its own process at startup (main.ts).
 *
 * Node 24's V8 (13.6) raised the young generation's maximum from 8 to 32 MB. That moved the
 * scavenge V8 runs for short-lived Buffers (each streamed chunk is one, allocated outside the
 * JavaScript heap) from 32 MB of them to 128 MB: above the fixed 64 MB of external memory at
 * which V8 starts a full mark-compact instead. So every 64 MB streamed through the gateway cost
 * a mark-compact of its whole heap (nodejs/node#61967, #63863, confirmed). Counting external
 * memory in V8's global limit, which V8 has since made its default, brings back scavenges: in
 * the bench's 256 KB scenario the gateway's CPU per response fell from 350-400 µs to 140-170 µs
 * (docs/performance.md, fifth session).
 *
 * An operator who names the flag (either way) on node's command line keeps their choice (V8
 * flags like this one are not allowed in NODE_OPTIONS).
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

export interface V8Runtime {
  /** `process.versions.v8`, e.g. "13.6.233.10-node.28". */
  v8Version: string;
  /** `process.execArgv`: node's own command-line options. */
  execArgv: readonly string[];
}

/** The flag on node's command line, either way (`--no-…`), with dashes or underscores. */
const NAMED = /^--(no-?)?external[-_]memory[-_]accounted[-_]in[-_]global[-_]limit(=.*)?$/;

/**
 * The flags to set for this runtime: none before V8 13.6 (or a version it cannot read), or
 * when the operator chose.
 */
export function v8TuningFlags(rt: V8Runtime): string[] {
  const [major, minor] = rt.v8Version.split('.').map((n) => Number.parseInt(n, 10));
  if (major === undefined || minor === undefined || !Number.isFinite(major) || !Number.isFinite(minor))
    return [];
  if (major < 13 || (major === 13 && minor < 6)) return [];
  if (rt.execArgv.some((arg) => NAMED.test(arg))) return [];
  return [`--${EXTERNAL_MEMORY_FLAG}`];
}

/** Applies v8TuningFlags to this process; returns what it set. */
export function tuneV8(): string[] {
  const flags = v8TuningFlags({ v8Version: process.versions.v8, execArgv: process.execArgv });
  for (const flag of flags) setFlagsFromString(flag);
  return flags;
}
