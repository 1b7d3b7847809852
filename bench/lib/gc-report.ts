/**
 * The gateway's garbage collections during a scenario, from its memory port's GET /gc
 * (bench/servers/gateway.ts: perf_hooks 'gc' entries, counted since the last read). The
 * tail target reads against it: a p99 far above p50 with long mark-compacts in the same
 * scenario points at the heap; without them, at the host or the kernel.
 */
export type GcByKind = Record<string, { count: number; totalMs: number; maxMs: number }>;

/** The collections since the last call (all the gateway's runs in between), or null without a port. */
export async function takeGc(memoryPort: unknown): Promise<GcByKind | null> {
  if (typeof memoryPort !== 'number' || memoryPort <= 0) return null;
  const res = await fetch(`http://127.0.0.1:${memoryPort}/gc`);
  if (!res.ok) throw new Error(`gateway memory port: GET /gc answered ${res.status}`);
  return (await res.json()) as GcByKind;
}

export function formatGc(gc: GcByKind): string {
  const kinds = Object.entries(gc).filter(([, k]) => k.count > 0);
  if (kinds.length === 0) return 'no collections';
  return kinds
    .map(
      ([kind, k]) =>
        `${k.count} ${kind} (${k.totalMs.toFixed(0)} ms in all, longest ${k.maxMs.toFixed(1)} ms)`,
    )
    .join(', ');
}
