/**
 * `--perf`: where a server's CPU per request goes, every thread and every layer counted. V8's
 * profiler (`--profile`) sees the main thread's JavaScript and lumps the rest into "(program)"
 * and "(garbage collector)"; Linux perf samples the process as the kernel runs it: the kernel's
 * send and receive (on loopback the receiver's softirq runs on the sender's CPU), Node's C++,
 * llhttp, V8's runtime and its compiler and GC threads, and the JavaScript (node runs with
 * `--perf-basic-prof`, which names the JIT's code).
 *
 * For one scenario the gateway and its leanest baseline (the minimal 402 server, the minimal
 * forwarder, the minimal paid server) each get one more run under `perf record -g`. Each
 * sample is put in the first category below that its stack matches, and a category's share
 * of the samples times the run's CPU per request (utime + stime, as in the table) is its
 * µs per request. The two columns side by side say where the gateway's extra cost goes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ScenarioDef } from './definitions.ts';
import type { Config, RunResult, ScenarioOptions } from './scenario.ts';
import { measure } from './scenario.ts';

/** One sampled stack: frames from the leaf up, each `{ ip, sym }`. */
interface Frame {
  kernel: boolean;
  sym: string;
}
type Stack = Frame[];

export interface NativeProfile {
  server: string;
  cpuUsPerReq: number;
  rps: number;
  samples: number;
  /** µs per request by category, in CATEGORIES' order. */
  categories: Record<string, number>;
  /** The project's own functions (packages/, bench/servers/), inclusive µs per request, largest first. */
  functions: { name: string; usPerReq: number }[];
}

const GC =
  /Heap::CollectGarbage|ScavengerCollector|Heap::Scavenge|MarkCompactCollector|IncrementalMarking|MinorMarkSweep|MinorMS|GCTracer|ConcurrentMarking|Sweeper::/;
const SOCKET_WRITE = /DoTryWrite|LibuvStreamWrap::DoWrite|uv__write|uv_try_write/;
const COMPILE = /Compil|Maglev|Baseline|Turbofan|Turboshaft/i;

/** A frame of the project's own JavaScript (not a dependency's, not Node's). */
function projectFrame(f: Frame): boolean {
  return (
    f.sym.startsWith('JS:') &&
    !f.sym.includes('/node_modules/') &&
    (f.sym.includes('/packages/') || f.sym.includes('/bench/servers/'))
  );
}

/** A thread other than the main one: V8's compiler and GC helpers, libuv's pool. */
function background(s: Stack): boolean {
  return s.some((f) => f.sym.includes('start_thread')) && !s.some((f) => f.sym.includes('node::Start'));
}

export const CATEGORIES: [string, (s: Stack) => boolean][] = [
  ['V8 threads: compiling', (s) => background(s) && s.some((f) => COMPILE.test(f.sym))],
  ['V8 threads: GC and other', background],
  ['garbage collection, main thread', (s) => s.some((f) => GC.test(f.sym))],
  ['socket writes (kernel send + loopback delivery)', (s) => s.some((f) => SOCKET_WRITE.test(f.sym))],
  ["the server's own code, with what it calls", (s) => s.some(projectFrame)],
  ['undici (the upstream client)', (s) => s.some((f) => f.sym.includes('/node_modules/undici/'))],
  ['other libraries', (s) => s.some((f) => f.sym.includes('/node_modules/'))],
  ["Node's HTTP server, streams and timers (JavaScript)", (s) => s.some((f) => /^JS:.*node:/.test(f.sym))],
  ['kernel: socket reads, polling, timers', (s) => s[0]?.kernel === true],
  ['other native: llhttp, V8 runtime, libuv, libc', () => true],
];

/** `JS:*'handle file:///…/packages/gateway/src/http/fast-unpaid.ts:155:18` → `handle (gateway/src/http/fast-unpaid.ts:155)`. */
export function functionName(sym: string): string {
  const m = /^JS:[*~^+]?'?(\S*)\s+(?:file:\/\/)?\S*?\/(packages|bench\/servers)\/(\S+?):(\d+):\d+$/.exec(sym);
  if (!m) return sym;
  const [, name, root, path, line] = m;
  return `${name || '(anonymous)'} (${root === 'packages' ? '' : 'bench/servers/'}${path}:${line})`;
}

/** Parses `perf script -F ip,sym`: stacks separated by blank lines, a frame per line. */
export function parsePerfScript(text: string): Stack[] {
  const stacks: Stack[] = [];
  let cur: Stack = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') {
      if (cur.length > 0) stacks.push(cur);
      cur = [];
      continue;
    }
    const space = line.indexOf(' ');
    const ip = space < 0 ? line : line.slice(0, space);
    const sym = space < 0 ? '[unknown]' : line.slice(space + 1).trim();
    cur.push({ kernel: ip.length === 16 && ip.startsWith('ffff'), sym });
  }
  if (cur.length > 0) stacks.push(cur);
  return stacks;
}

/** Shares of `stacks` by category and by project function, scaled to `cpuUsPerReq`. */
export function attribute(
  stacks: Stack[],
  cpuUsPerReq: number,
): Pick<NativeProfile, 'categories' | 'functions' | 'samples'> {
  const counts = new Map<string, number>(CATEGORIES.map(([name]) => [name, 0]));
  const fns = new Map<string, number>();
  for (const s of stacks) {
    const [name] = CATEGORIES.find(([, test]) => test(s))!;
    counts.set(name, counts.get(name)! + 1);
    const seen = new Set<string>();
    for (const f of s) {
      if (!projectFrame(f)) continue;
      const fn = functionName(f.sym);
      if (seen.has(fn)) continue;
      seen.add(fn);
      fns.set(fn, (fns.get(fn) ?? 0) + 1);
    }
  }
  const per = stacks.length > 0 ? cpuUsPerReq / stacks.length : 0;
  return {
    samples: stacks.length,
    categories: Object.fromEntries([...counts].map(([k, n]) => [k, n * per])),
    functions: [...fns].sort((a, b) => b[1] - a[1]).map(([name, n]) => ({ name, usPerReq: n * per })),
  };
}

/** One run of `cfg` with `perf record` on its server; null when the run measured nothing. */
export async function profileRun(
  cfg: Config,
  seconds: number,
  o: ScenarioOptions,
  file: string,
): Promise<NativeProfile | null> {
  const perf = spawn('perf', ['record', '-q', '-F', '999', '-g', '-p', String(cfg.server.pid), '-o', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  perf.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => perf.on('exit', (code) => resolve(code)));
  await new Promise((r) => setTimeout(r, 300)); // attached
  let run: RunResult;
  try {
    run = await measure(cfg, seconds, o);
  } finally {
    perf.kill('SIGINT');
  }
  const code = await exited;
  if (code !== 0 && code !== null) throw new Error(`perf record failed (${code}): ${stderr.trim()}`);
  if (!(run.requests > 0)) return null;
  const script = spawnSync('perf', ['script', '-i', file, '-F', 'ip,sym'], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  rmSync(file, { force: true });
  if (script.status !== 0) throw new Error(`perf script failed: ${script.stderr.trim()}`);
  const cpu = run.cpuUsPerReq[cfg.server.name]!;
  return {
    server: cfg.label,
    cpuUsPerReq: cpu,
    rps: run.rps,
    ...attribute(parsePerfScript(script.stdout), cpu),
  };
}

/** The two profiles side by side, and each one's largest own functions. */
export function formatNative(title: string, gw: NativeProfile, base: NativeProfile, top = 12): string {
  const w = Math.max(...CATEGORIES.map(([n]) => n.length), 32);
  const col = (s: string) => s.padStart(12);
  const num = (v: number) => col(v.toFixed(1));
  const lines = [
    `native profile (Linux perf, every thread), ${title}: CPU µs per request`,
    `${''.padEnd(w)}${col('Tollgate')}${col('baseline')}${col('difference')}   (baseline: ${base.server})`,
  ];
  for (const [name] of CATEGORIES) {
    const a = gw.categories[name]!;
    const b = base.categories[name]!;
    if (a < 0.05 && b < 0.05) continue;
    lines.push(`${name.padEnd(w)}${num(a)}${num(b)}${col(`${a - b >= 0 ? '+' : ''}${(a - b).toFixed(1)}`)}`);
  }
  const d = gw.cpuUsPerReq - base.cpuUsPerReq;
  lines.push(
    `${'total (this run, perf attached)'.padEnd(w)}${num(gw.cpuUsPerReq)}${num(base.cpuUsPerReq)}${col(`${d >= 0 ? '+' : ''}${d.toFixed(1)}`)}`,
    `${'samples'.padEnd(w)}${col(String(gw.samples))}${col(String(base.samples))}`,
  );
  for (const p of [gw, base]) {
    lines.push(
      `  ${p.server}: own functions, inclusive µs/req (socket writes included): ` +
        p.functions
          .slice(0, top)
          .map((f) => `${f.name} ${f.usPerReq.toFixed(1)}`)
          .join('; '),
    );
  }
  return lines.join('\n');
}

/** Each scenario's leanest baseline: what the gateway's extra cost is measured against. */
const LEANEST: Record<string, string> = { '402': 'lean402', free: 'floor', big: 'floor', paid: 'paidfloor' };

/** --perf: for each scenario, the gateway and its leanest baseline, one run each under perf, printed side by side. */
export async function nativeProfiles(
  defs: ScenarioDef[],
  o: ScenarioOptions,
  dir: string,
): Promise<Record<string, { gateway: NativeProfile; baseline: NativeProfile }>> {
  const out: Record<string, { gateway: NativeProfile; baseline: NativeProfile }> = {};
  const pids = new Set<number>();
  try {
    for (const def of defs) {
      const gw = def.configs.find((c) => c.key === 'gateway')!;
      const lean = def.configs.find((c) => c.key === LEANEST[def.key]);
      if (!lean) continue;
      const profiles: NativeProfile[] = [];
      for (const cfg of [gw, lean]) {
        pids.add(cfg.server.pid);
        const p = await profileRun(
          cfg,
          o.roundS,
          { ...o, drainMs: def.drainMs ?? o.drainMs },
          join(dir, 'perf.data'),
        );
        if (p) profiles.push(p);
      }
      if (profiles.length < 2) {
        o.log(`native profile ${def.title}: skipped, a run measured nothing (no proofs left?)`);
        continue;
      }
      out[def.key] = { gateway: profiles[0]!, baseline: profiles[1]! };
      console.log(`\n${formatNative(def.title, profiles[0]!, profiles[1]!)}`);
    }
  } finally {
    // node's --perf-basic-prof symbol maps, read by perf script above.
    for (const pid of pids) rmSync(`/tmp/perf-${pid}.map`, { force: true });
  }
  return out;
}
