/**
 * Turns rounds into medians and same-round ratios, checks DESIGN §5's targets, and
 * prints the table. Ratios are medians of per-round ratios (each paired with the
 * baseline measured in the same round), as in shared/notes/performance.md.
 */
import type { Config, ScenarioResult } from './scenario.ts';
import type { SoakResult } from './soak.ts';
import { median, range } from './stats.ts';

export interface ConfigSummary {
  key: string;
  label: string;
  rps: number;
  rpsRange: [number, number];
  p50Ms: number;
  p99Ms: number;
  /** Median over rounds of p99 / p50. */
  tail: number;
  cpuUsPerReq: number;
  /** Median share of the server's CPU time spent in the kernel. */
  sysShare: number;
  /** Median busy share of the server CPU (0) and the load-generator CPU (1). */
  cpuBusy: [number, number];
  /** Median CPU µs per request of the other watched processes (upstream, chain). */
  othersUsPerReq: Record<string, number>;
  /** Median per-round rps ratio against each baseline of the scenario. */
  ratios: Record<string, number>;
  /** Median per-round ratio of this config's CPU per request to each baseline's. */
  cpuRatios: Record<string, number>;
  problems: string[];
}

export interface ScenarioSummary {
  key: string;
  title: string;
  baselines: string[];
  configs: ConfigSummary[];
  stealSec: number;
  loadCpuBusy: number;
}

export function summarize(
  key: string,
  title: string,
  configs: Config[],
  baselines: string[],
  result: ScenarioResult,
): ScenarioSummary {
  const { rounds } = result;
  const summaries = configs.map((cfg): ConfigSummary => {
    const runs = rounds.map((r) => r[cfg.key]!);
    const ratios: Record<string, number> = {};
    const cpuRatios: Record<string, number> = {};
    for (const b of baselines) {
      const base = configs.find((c) => c.key === b)!;
      ratios[b] = median(rounds.map((r) => r[cfg.key]!.rps / r[b]!.rps));
      cpuRatios[b] = median(
        rounds.map((r) => r[cfg.key]!.cpuUsPerReq[cfg.server.name]! / r[b]!.cpuUsPerReq[base.server.name]!),
      );
    }
    const othersUsPerReq: Record<string, number> = {};
    for (const o of cfg.others ?? [])
      othersUsPerReq[o.name] = median(runs.map((r) => r.cpuUsPerReq[o.name]!));
    return {
      key: cfg.key,
      label: cfg.label,
      rps: median(runs.map((r) => r.rps)),
      rpsRange: range(runs.map((r) => r.rps)),
      p50Ms: median(runs.map((r) => r.p50Ms)),
      p99Ms: median(runs.map((r) => r.p99Ms)),
      tail: median(runs.map((r) => r.p99Ms / r.p50Ms)),
      cpuUsPerReq: median(runs.map((r) => r.cpuUsPerReq[cfg.server.name]!)),
      sysShare: median(runs.map((r) => r.serverSysShare)),
      cpuBusy: [
        median(runs.map((r) => r.cpus[0]?.busy ?? Number.NaN)),
        median(runs.map((r) => r.cpus[1]?.busy ?? Number.NaN)),
      ],
      othersUsPerReq,
      ratios,
      cpuRatios,
      problems: [...new Set(runs.flatMap((r) => r.problems))],
    };
  });
  const all = rounds.flatMap((r) => Object.values(r));
  return {
    key,
    title,
    baselines,
    configs: summaries,
    stealSec: all.reduce((s, r) => s + r.cpus.reduce((t, c) => t + c.stealSec, 0), 0),
    loadCpuBusy: median(all.map((r) => r.cpus[1]?.busy ?? Number.NaN)),
  };
}

export interface Target {
  name: string;
  holds: boolean;
  detail: string;
}

const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

/**
 * `ours` against `baseline` in scenario `s`. `lean` names the scenario's leanest Node servers
 * doing the same work (the minimal 402 server, forwarder, paid server): their ratio to the same
 * baseline, in the same rounds, is printed after the figures. It is not judged; it shows whether
 * the target is within reach of that work on this machine at all (docs/performance.md).
 */
export function ratioTarget(
  name: string,
  s: ScenarioSummary | undefined,
  ours: string,
  baseline: string,
  min: number,
  lean: readonly string[] = [],
): Target {
  const c = s?.configs.find((x) => x.key === ours);
  const b = s?.configs.find((x) => x.key === baseline);
  if (!s || !c || !b) return { name, holds: false, detail: 'not measured' };
  const r = c.ratios[baseline]!;
  const leans = lean
    .map((k) => s.configs.find((x) => x.key === k))
    .filter((x): x is ConfigSummary => x !== undefined && x.ratios[baseline] !== undefined)
    .map((x) => `${x.label} ${f(x.ratios[baseline]!)}×`);
  return {
    name,
    holds: r >= min,
    detail:
      `${f(r)}× (target ≥ ${min}×): ${c.rps.toFixed(0)} vs ${b.rps.toFixed(0)} req/s median; ` +
      `CPU ${c.cpuUsPerReq.toFixed(0)} vs ${b.cpuUsPerReq.toFixed(0)} µs/req` +
      (leans.length > 0 ? `; the same work alone, same rounds: ${leans.join(', ')}` : ''),
  };
}

/**
 * p99 ≤ 4× p50 for each of `ours`' configurations, with the tails of the scenario's other
 * servers in the same rounds after the figures (not judged: whether the host lets any server hold it).
 */
export function tailTargets(scenarios: ScenarioSummary[], ours: (key: string) => boolean): Target[] {
  const out: Target[] = [];
  for (const s of scenarios) {
    const others = s.configs.filter((c) => !ours(c.key)).map((c) => `${c.label} ${f(c.tail)}`);
    for (const c of s.configs) {
      if (!ours(c.key)) continue;
      out.push({
        name: `p99 ≤ 4× p50: ${s.title} / ${c.label}`,
        // A tail that could not be measured (NaN live, null in a saved run) does not hold.
        holds: Number.isFinite(c.tail) && c.tail <= 4,
        detail:
          `p99/p50 = ${f(c.tail)} (p50 ${f(c.p50Ms)} ms, p99 ${f(c.p99Ms)} ms)` +
          (others.length > 0 ? `; the others, same rounds: ${others.join(', ')}` : ''),
      });
    }
  }
  return out;
}

function pad(s: string, n: number, right = false): string {
  return right ? s.padStart(n) : s.padEnd(n);
}

export function formatTable(scenarios: ScenarioSummary[]): string {
  const head = [
    pad('scenario', 22),
    pad('config', 30),
    pad('req/s', 8, true),
    pad('(min–max)', 15, true),
    pad('p50 ms', 8, true),
    pad('p99 ms', 8, true),
    pad('p99/p50', 8, true),
    pad('CPU µs/req', 11, true),
    pad('sys', 5, true),
    pad('CPU0/1 busy', 12, true),
    '  ratio vs baselines (rps; CPU/req)',
  ].join(' ');
  const lines = [head, '-'.repeat(head.length + 10)];
  for (const s of scenarios) {
    for (const c of s.configs) {
      const ratios = s.baselines
        .filter((b) => b !== c.key)
        .map((b) => {
          const label = s.configs.find((x) => x.key === b)!.label;
          return `${f(c.ratios[b]!)}× ${label} (CPU ${f(c.cpuRatios[b]!)}×)`;
        })
        .join(', ');
      lines.push(
        [
          pad(s.title, 22),
          pad(c.label, 30),
          pad(c.rps.toFixed(0), 8, true),
          pad(`(${c.rpsRange[0].toFixed(0)}–${c.rpsRange[1].toFixed(0)})`, 15, true),
          pad(f(c.p50Ms), 8, true),
          pad(f(c.p99Ms), 8, true),
          pad(f(c.tail), 8, true),
          pad(c.cpuUsPerReq.toFixed(0), 11, true),
          pad(`${(c.sysShare * 100).toFixed(0)}%`, 5, true),
          pad(`${(c.cpuBusy[0] * 100).toFixed(0)}/${(c.cpuBusy[1] * 100).toFixed(0)} %`, 12, true),
          `  ${ratios}`,
        ].join(' '),
      );
      const others = Object.entries(c.othersUsPerReq);
      if (others.length) {
        lines.push(
          `${' '.repeat(54)}(+ ${others.map(([k, v]) => `${k} ${v.toFixed(0)} µs/req`).join(', ')})`,
        );
      }
      for (const p of c.problems) lines.push(`${' '.repeat(54)}! ${p}`);
    }
  }
  return lines.join('\n');
}

export function formatTargets(targets: Target[]): string {
  return targets.map((t) => `${t.holds ? 'HOLDS ' : 'MISSES'}  ${t.name}: ${t.detail}`).join('\n');
}

/**
 * Not a target: where the paid target stands against the paid work alone (the minimal paid
 * server, bench/servers/minimal-paid.ts), and against the same work keeping its redemptions in
 * the gateway's store (the same server, BENCH_RECORD=tollgate), measured in the same rounds.
 */
export function paidYardstick(summaries: ScenarioSummary[]): string | null {
  const paid = summaries.find((s) => s.key === 'paid');
  const lean = paid?.configs.find((c) => c.key === 'paidfloor');
  const ours = paid?.configs.find((c) => c.key === 'gateway');
  if (!lean || !ours) return null;
  const line =
    `note    the paid work alone (minimal paid server): ${f(lean.ratios['floor']!)}× minimal forwarder, ` +
    `${f(lean.cpuUsPerReq, 0)} µs/req; the gateway ${f(ours.ratios['paidfloor']!)}× of it (CPU ${f(ours.cpuRatios['paidfloor']!)}×)`;
  const record = paid?.configs.find((c) => c.key === 'paidrecord');
  if (!record) return line;
  return (
    `${line}\n` +
    `note    the paid work with Tollgate's redemption record (the same server, the gateway's store): ` +
    `${f(record.ratios['floor']!)}× minimal forwarder, ${f(record.cpuUsPerReq, 0)} µs/req ` +
    `(${f(record.cpuRatios['paidfloor']!)}× the minimal paid server's CPU); the gateway ${f(ours.ratios['paidrecord']!)}× of it ` +
    `(CPU ${f(ours.cpuRatios['paidrecord']!)}×)`
  );
}

/**
 * Not a target: where the 402 targets stand against the 402's work alone (the minimal 402
 * server, bench/servers/minimal-402.ts), measured in the same rounds.
 */
export function challengeYardstick(summaries: ScenarioSummary[]): string | null {
  const challenge = summaries.find((s) => s.key === '402');
  const lean = challenge?.configs.find((c) => c.key === 'lean402');
  const ours = challenge?.configs.find((c) => c.key === 'gateway');
  if (!lean || !ours) return null;
  return (
    `note    the 402's work alone (minimal 402 server): ${f(lean.ratios['x402']!)}× @x402/express, ` +
    `${f(lean.ratios['bare']!)}× bare node:http 402, ${f(lean.cpuUsPerReq, 0)} µs/req; ` +
    `the gateway ${f(ours.ratios['lean402']!)}× of it (CPU ${f(ours.cpuRatios['lean402']!)}×)`
  );
}

/** Issue 14's targets (they supersede DESIGN §5's), each with the figures it was judged on. */
export function designTargets(summaries: ScenarioSummary[], soaks: SoakResult[]): Target[] {
  const byKey = (k: string) => summaries.find((s) => s.key === k);
  return [
    ratioTarget('402 path ≥ 0.6× bare node:http 402', byKey('402'), 'gateway', 'bare', 0.6, ['lean402']),
    ratioTarget('402 path ≥ 2.5× @x402/express 402', byKey('402'), 'gateway', 'x402', 2.5, ['lean402']),
    ratioTarget('forward without payment ≥ 0.9× minimal forwarder', byKey('free'), 'gateway', 'floor', 0.9),
    ratioTarget('forward without payment ≥ 0.5× nginx', byKey('free'), 'gateway', 'nginx', 0.5, ['floor']),
    ratioTarget('256 KB streamed ≥ 0.9× minimal forwarder', byKey('big'), 'gateway', 'floor', 0.9),
    ratioTarget('256 KB streamed ≥ 0.75× nginx', byKey('big'), 'gateway', 'nginx', 0.75, ['floor']),
    ratioTarget('paid path ≥ 0.2× minimal forwarder', byKey('paid'), 'gateway', 'floor', 0.2, [
      'paidfloor',
      'paidrecord',
    ]),
    ...tailTargets(summaries, (k) => k === 'gateway'),
    ...soaks.map((s) => ({
      name: `memory flat over a ${s.seconds} s soak: ${s.label}`,
      holds: s.flat,
      detail:
        `heap after full GC ${s.retained.startMB.toFixed(1)} → ${s.retained.endMB.toFixed(1)} MB` +
        `${s.retained.collected ? '' : ' (no gc(): not collected)'}, ` +
        `RSS ${s.rss.startMB.toFixed(1)} → ${s.rss.endMB.toFixed(1)} MB (first vs last third, slope ${s.rss.slopeMBPerMin.toFixed(2)} MB/min), ` +
        `heap floor ${s.heapFloor.startMB.toFixed(1)} → ${s.heapFloor.endMB.toFixed(1)} MB, over ${s.run.requests} requests`,
    })),
  ];
}
