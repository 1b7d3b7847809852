/**
 * Memory over a long run: drives one route for `seconds` while the gateway reports,
 * once a second, its RSS and the lowest V8 heap use of that second (see
 * servers/gateway.ts). Before and after the run the gateway is asked for its heap
 * after two full collections: growth there is memory it kept. "Flat" means that
 * retained heap grew by at most max(5 %, 2 MB) and RSS (median of the first vs the
 * last third of the samples) by at most max(10 %, 16 MB). The RSS slope and the heap
 * floor per third are reported too; the floor alone can rise for a minute or more
 * between V8's full collections, so it is not judged.
 */
import type { Child } from './children.ts';
import { type Config, measure, type RunResult, type ScenarioOptions } from './scenario.ts';
import { median, slope } from './stats.ts';

export interface SoakResult {
  label: string;
  seconds: number;
  samples: { t: number; rssMB: number; heapMinMB: number }[];
  rss: { startMB: number; endMB: number; minMB: number; maxMB: number; slopeMBPerMin: number };
  heapFloor: { startMB: number; endMB: number };
  /** Heap after full collections, before and after the run. */
  retained: { startMB: number; endMB: number; collected: boolean };
  flat: boolean;
  run: RunResult;
}

const MB = 1024 * 1024;

async function retainedHeap(server: Child): Promise<{ mb: number; collected: boolean }> {
  const port = server.info['memoryPort'];
  if (typeof port !== 'number') throw new Error('the gateway has no memory port (BENCH_MEMORY_REPORT)');
  const res = await fetch(`http://127.0.0.1:${port}/memory`);
  const m = (await res.json()) as { heapUsed: number; collected: boolean };
  return { mb: m.heapUsed / MB, collected: m.collected };
}

export async function soak(
  cfg: Config,
  server: Child,
  seconds: number,
  o: ScenarioOptions,
): Promise<SoakResult> {
  const samples: SoakResult['samples'] = [];
  const before = await retainedHeap(server);
  const t0 = performance.now();
  let buf = '';
  const onData = (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('mem ')) continue;
      const m = JSON.parse(line.slice(4)) as { rss: number; heapMin: number | null };
      if (m.heapMin === null) continue;
      samples.push({ t: (performance.now() - t0) / 1000, rssMB: m.rss / MB, heapMinMB: m.heapMin / MB });
    }
  };
  server.proc.stderr?.on('data', onData);
  let run: RunResult;
  try {
    run = await measure(cfg, seconds, o);
  } finally {
    server.proc.stderr?.off('data', onData);
  }
  const after = await retainedHeap(server);
  if (samples.length < 6)
    throw new Error(`soak ${cfg.label}: only ${samples.length} memory samples from the gateway`);
  const third = Math.floor(samples.length / 3);
  const first = samples.slice(0, third);
  const last = samples.slice(-third);
  const rss = {
    startMB: median(first.map((s) => s.rssMB)),
    endMB: median(last.map((s) => s.rssMB)),
    minMB: Math.min(...samples.map((s) => s.rssMB)),
    maxMB: Math.max(...samples.map((s) => s.rssMB)),
    slopeMBPerMin: slope(samples.map((s) => ({ x: s.t / 60, y: s.rssMB }))),
  };
  const heapFloor = {
    startMB: Math.min(...first.map((s) => s.heapMinMB)),
    endMB: Math.min(...last.map((s) => s.heapMinMB)),
  };
  const retained = { startMB: before.mb, endMB: after.mb, collected: before.collected && after.collected };
  const grew = (a: number, b: number, share: number, floorMB: number) => b - a > Math.max(share * a, floorMB);
  return {
    label: cfg.label,
    seconds,
    samples,
    rss,
    heapFloor,
    retained,
    flat: !grew(retained.startMB, retained.endMB, 0.05, 2) && !grew(rss.startMB, rss.endMB, 0.1, 16),
    run,
  };
}
