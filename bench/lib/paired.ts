/**
 * Paired runs (`npm run bench -- --paired`): the gateway and one baseline loaded at the same
 * time, each by its own wrk (both on the load CPU), both servers on the server CPU. The two
 * share that CPU for the same seconds, so a host whose speed drifts from one second to the
 * next (a shared VM) slows both alike, and the ratio of their throughputs is the ratio of the
 * CPU each spends per request. The sequential rounds (scenario.ts) compare runs a few seconds
 * apart; on such a host their ratios move with the drift. Not the targets' measure: a second
 * reading of the same ratios, printed beside them.
 */

import { type Config, measure, type ScenarioOptions } from './scenario.ts';
import { median } from './stats.ts';

export interface PairedResult {
  baseline: string;
  label: string;
  /** Per round: gateway req/s ÷ baseline req/s, and baseline CPU/req ÷ gateway CPU/req. */
  rpsRatios: number[];
  cpuRatios: number[];
  problems: string[];
}

/** For each baseline: `rounds` runs of the gateway and it side by side; ratios per run. */
export async function runPaired(
  title: string,
  gateway: Config,
  baselines: Config[],
  o: ScenarioOptions,
): Promise<PairedResult[]> {
  const results: PairedResult[] = [];
  for (const b of baselines) {
    const r: PairedResult = { baseline: b.key, label: b.label, rpsRatios: [], cpuRatios: [], problems: [] };
    await Promise.all([measure(gateway, o.warmupS, o), measure(b, o.warmupS, o)]);
    for (let i = 0; i < o.rounds; i++) {
      const [g, x] = await Promise.all([measure(gateway, o.roundS, o), measure(b, o.roundS, o)]);
      for (const p of [...g.problems, ...x.problems]) if (!r.problems.includes(p)) r.problems.push(p);
      const gCpu = g.cpuUsPerReq[gateway.server.name]!;
      const xCpu = x.cpuUsPerReq[b.server.name]!;
      r.rpsRatios.push(g.rps / x.rps);
      r.cpuRatios.push(xCpu / gCpu);
      o.log(
        `  ${title} paired round ${i + 1}: gateway ${g.rps.toFixed(0)} req/s ${gCpu.toFixed(0)} µs/req, ` +
          `${b.label} ${x.rps.toFixed(0)} req/s ${xCpu.toFixed(0)} µs/req`,
      );
    }
    results.push(r);
  }
  return results;
}

export function formatPaired(title: string, results: PairedResult[]): string {
  return results
    .map(
      (r) =>
        `paired  ${title}: gateway ${median(r.rpsRatios).toFixed(2)}× ${r.label} ` +
        `(rounds ${r.rpsRatios.map((x) => x.toFixed(2)).join(', ')}; CPU/req ratio ${median(r.cpuRatios).toFixed(2)}×)` +
        `${r.problems.length ? `  [${r.problems.join('; ')}]` : ''}`,
    )
    .join('\n');
}
