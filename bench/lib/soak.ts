/**
 * Memory over a long run: drives one route for `seconds` while the gateway reports,
 * once a second, its RSS and the lowest V8 heap use of that second (see
 * servers/gateway.ts). Growth is judged between the first and the last third of the
 * run: RSS by medians, the heap by its floor (the lowest value, i.e. after
 * collections), so GC saw-teeth do not count as growth. The least-squares slope of
 * RSS is reported too.
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
  flat: boolean;
  run: RunResult;
}

const MB = 1024 * 1024;

export async function soak(
  cfg: Config,
  server: Child,
  seconds: number,
  o: ScenarioOptions,
): Promise<SoakResult> {
  const samples: SoakResult['samples'] = [];
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
  const grew = (a: number, b: number, share: number) => b - a > Math.max(share * a, 4);
  return {
    label: cfg.label,
    seconds,
    samples,
    rss,
    heapFloor,
    flat: !grew(rss.startMB, rss.endMB, 0.05) && !grew(heapFloor.startMB, heapFloor.endMB, 0.1),
    run,
  };
}
