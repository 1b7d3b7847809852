/**
 * Memory over a long run: drives one route for `seconds` while sampling the server's
 * RSS once a second. Growth is judged between the medians of the first and the last
 * third of the samples (robust to GC saw-teeth); the least-squares slope is reported too.
 */
import { rssBytes } from './proc.ts';
import { type Config, measure, type RunResult, type ScenarioOptions } from './scenario.ts';
import { median, slope } from './stats.ts';

export interface SoakResult {
  label: string;
  seconds: number;
  samples: { t: number; rssMB: number }[];
  startMB: number;
  endMB: number;
  minMB: number;
  maxMB: number;
  slopeMBPerMin: number;
  growthMB: number;
  flat: boolean;
  run: RunResult;
}

const MB = 1024 * 1024;

export async function soak(cfg: Config, seconds: number, o: ScenarioOptions): Promise<SoakResult> {
  const samples: { t: number; rssMB: number }[] = [];
  const t0 = performance.now();
  const sample = () =>
    samples.push({ t: (performance.now() - t0) / 1000, rssMB: rssBytes(cfg.server.pid) / MB });
  sample();
  const timer = setInterval(sample, 1000);
  let run: RunResult;
  try {
    run = await measure(cfg, seconds, o);
  } finally {
    clearInterval(timer);
  }
  sample();
  const third = Math.max(1, Math.floor(samples.length / 3));
  const startMB = median(samples.slice(0, third).map((s) => s.rssMB));
  const endMB = median(samples.slice(-third).map((s) => s.rssMB));
  const growthMB = endMB - startMB;
  return {
    label: cfg.label,
    seconds,
    samples,
    startMB,
    endMB,
    minMB: Math.min(...samples.map((s) => s.rssMB)),
    maxMB: Math.max(...samples.map((s) => s.rssMB)),
    slopeMBPerMin: slope(samples.map((s) => ({ x: s.t / 60, y: s.rssMB }))),
    growthMB,
    flat: growthMB <= Math.max(0.05 * startMB, 4),
    run,
  };
}
