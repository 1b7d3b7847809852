/**
 * One scenario = a few configurations (the gateway and its baselines) measured in
 * the same run: a warm-up of each, then rounds in which every configuration runs
 * once, alternating forward and reverse order so slow drifts of the shared VM hit
 * all of them alike. Each run records wrk's figures, the CPU seconds of the server
 * process(es) from /proc, and the busy/steal time of each CPU.
 */
import { cpuDelta, cpuTimes, sampleCpus, waitForQuietCpu } from './proc.ts';
import { runWrk, type WrkResult } from './wrk.ts';

export interface Watched {
  name: string;
  pid: number;
  /** Count the process's descendants too (nginx's worker). */
  tree?: boolean;
}

export interface Config {
  key: string;
  label: string;
  url: string;
  /** The process under test; its CPU per request is the table's figure. */
  server: Watched;
  /** Other processes whose CPU per request is recorded (upstream, chain). */
  others?: Watched[];
  /** What every response must be: 2xx, or 402. */
  expect: 'ok' | '402';
  /** Paid runs: draw X-PAYMENT proofs from this supply. */
  proofs?: ProofSupply;
  /** Runs before each of this configuration's runs (the minimal paid server forgets its redemptions). */
  before?: () => Promise<void>;
}

export interface ProofSupply {
  file: string;
  path: string;
  /** 1-based line of the next unused proof. */
  next: number;
  total: number;
}

export interface RunResult {
  rps: number;
  requests: number;
  activeS: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** CPU µs per completed request of the server, then of each other watched process. */
  cpuUsPerReq: Record<string, number>;
  /** Share of the server's CPU time spent in the kernel. */
  serverSysShare: number;
  /** Busy share of each CPU during the run, and steal seconds. */
  cpus: { busy: number; stealSec: number }[];
  errors: WrkResult['errors'];
  exhausted: boolean;
  problems: string[];
}

export interface ScenarioOptions {
  connections: number;
  loadCpu: string;
  script: string;
  warmupS: number;
  roundS: number;
  rounds: number;
  drainMs: number;
  /** The CPU the servers under test share: runScenario waits until it is quiet before each run. */
  quietCpu?: number;
  log: (line: string) => void;
}

export interface ScenarioResult {
  rounds: Record<string, RunResult>[];
}

function check(cfg: Config, w: WrkResult): string[] {
  const problems: string[] = [];
  const { connect, read, write, timeout, status } = w.errors;
  if (connect + read + write + timeout > 0) {
    problems.push(`socket errors: connect ${connect}, read ${read}, write ${write}, timeout ${timeout}`);
  }
  if (cfg.expect === 'ok' && status > 0) problems.push(`${status} responses were not 2xx/3xx`);
  if (cfg.expect === '402' && status < w.requests)
    problems.push(`${w.requests - status} responses were not 402`);
  if (w.requests === 0) problems.push('no request completed');
  return problems;
}

function notMeasured(why: string): RunResult {
  const none = Number.NaN;
  return {
    rps: none,
    requests: 0,
    activeS: 0,
    p50Ms: none,
    p90Ms: none,
    p99Ms: none,
    maxMs: none,
    cpuUsPerReq: {},
    serverSysShare: none,
    cpus: [],
    errors: { connect: 0, read: 0, write: 0, status: 0, timeout: 0 },
    exhausted: true,
    problems: [why],
  };
}

export async function measure(cfg: Config, seconds: number, o: ScenarioOptions): Promise<RunResult> {
  const watched = [cfg.server, ...(cfg.others ?? [])];
  await cfg.before?.();
  if (cfg.proofs && cfg.proofs.next > cfg.proofs.total) return notMeasured('no payment proofs left');
  const before = watched.map((p) => cpuTimes(p.pid, p.tree));
  const cpu0 = sampleCpus();
  const supply = cfg.proofs;
  const w = await runWrk({
    url: cfg.url,
    seconds,
    windowMs: seconds * 1000 - o.drainMs,
    connections: o.connections,
    cpu: o.loadCpu,
    script: o.script,
    proofs: supply ? { file: supply.file, from: supply.next, path: supply.path } : undefined,
  });
  const cpu1 = sampleCpus();
  const after = watched.map((p) => cpuTimes(p.pid, p.tree));
  if (supply) supply.next += w.sent;
  const cpuUsPerReq: Record<string, number> = {};
  const spent = watched.map((_, i) => ({
    user: after[i]!.user - before[i]!.user,
    system: after[i]!.system - before[i]!.system,
  }));
  watched.forEach((p, i) => {
    const total = spent[i]!.user + spent[i]!.system;
    cpuUsPerReq[p.name] = w.requests > 0 ? (total / w.requests) * 1e6 : Number.NaN;
  });
  const server = spent[0]!;
  const problems = check(cfg, w);
  if (w.exhausted) problems.push(`proofs ran out after ${w.activeS.toFixed(2)} s (window shortened)`);
  return {
    rps: w.rps,
    requests: w.requests,
    activeS: w.activeS,
    p50Ms: w.latencyMs.p50,
    p90Ms: w.latencyMs.p90,
    p99Ms: w.latencyMs.p99,
    maxMs: w.latencyMs.max,
    cpuUsPerReq,
    serverSysShare: server.system / (server.user + server.system || 1),
    cpus: cpuDelta(cpu0, cpu1),
    errors: w.errors,
    exhausted: w.exhausted,
    problems,
  };
}

export async function runScenario(
  title: string,
  configs: Config[],
  o: ScenarioOptions,
): Promise<ScenarioResult> {
  /** Before each run: the last one's leftover work on the shared CPU is not this one's. */
  const settle = async (cfg: Config) => {
    if (o.quietCpu === undefined) return;
    const { waitedMs, quiet } = await waitForQuietCpu(o.quietCpu);
    if (!quiet)
      o.log(`  CPU ${o.quietCpu} still busy after ${waitedMs} ms; running ${cfg.label} all the same`);
  };
  for (const cfg of configs) {
    await settle(cfg);
    const r = await measure(cfg, o.warmupS, o);
    o.log(
      `  warm-up ${cfg.label}: ${r.rps.toFixed(0)} req/s${r.problems.length ? `  [${r.problems.join('; ')}]` : ''}`,
    );
  }
  const rounds: Record<string, RunResult>[] = [];
  for (let i = 0; i < o.rounds; i++) {
    const order = i % 2 === 0 ? configs : [...configs].reverse();
    const round: Record<string, RunResult> = {};
    for (const cfg of order) {
      await settle(cfg);
      const r = await measure(cfg, o.roundS, o);
      round[cfg.key] = r;
      const steal = r.cpus.reduce((s, c) => s + c.stealSec, 0);
      o.log(
        `  ${title} round ${i + 1} ${cfg.label}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50Ms.toFixed(2)} ms, ` +
          `p99 ${r.p99Ms.toFixed(2)} ms, ${(r.cpuUsPerReq[cfg.server.name] ?? Number.NaN).toFixed(0)} µs CPU/req, ` +
          `steal ${steal.toFixed(2)} s${r.problems.length ? `  [${r.problems.join('; ')}]` : ''}`,
      );
    }
    rounds.push(round);
  }
  return { rounds };
}
