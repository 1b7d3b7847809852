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
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { trackTransient } from './children.ts';
import type { ScenarioDef } from './definitions.ts';
import type { Config, RunResult, ScenarioOptions } from './scenario.ts';
import { measure } from './scenario.ts';

/** A frame of a sampled stack. */
interface Frame {
  kernel: boolean;
  sym: string;
}
/** One sample: its thread's name, whether it is the process's main thread, its frames from the leaf up. */
interface Stack {
  thread: string;
  main: boolean;
  frames: Frame[];
}

/** The repository's root, as it appears in the JIT's names (`file:///…/packages/…`). */
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const OWN = [`${ROOT}/packages/`, `${ROOT}/bench/servers/`];

export interface NativeProfile {
  server: string;
  cpuUsPerReq: number;
  rps: number;
  samples: number;
  /** µs per request by category, in CATEGORIES' order. */
  categories: Record<string, number>;
  /** The project's own functions (packages/, bench/servers/), inclusive µs per request, largest first. */
  functions: { name: string; usPerReq: number }[];
  /** Whether any sample had kernel frames (perf_event_paranoid > 1 samples user space only). */
  kernelSeen: boolean;
  /**
   * The threads other than the main one, by name (V8's workers, libuv's pool), µs per request,
   * largest first, each with its largest user-space leaf functions (the nearest frame to the
   * sample that is not the kernel's): what "V8 threads: GC and other" holds.
   */
  threads: { name: string; usPerReq: number; leaves: { name: string; usPerReq: number }[] }[];
}

const GC =
  /Heap::CollectGarbage|ScavengerCollector|Heap::Scavenge|MarkCompactCollector|IncrementalMarking|MinorMarkSweep|MinorMS|GCTracer|ConcurrentMarking|Sweeper::/;
const SOCKET_WRITE = /DoTryWrite|LibuvStreamWrap::DoWrite|uv__write|uv_try_write/;
const COMPILE = /Compil|Maglev|Baseline|Turbofan|Turboshaft/i;

/** A frame of the project's own JavaScript (not a dependency's, not Node's). */
function projectFrame(f: Frame, own: readonly string[]): boolean {
  return f.sym.startsWith('JS:') && !f.sym.includes('/node_modules/') && own.some((o) => f.sym.includes(o));
}
const any = (s: Stack, test: (f: Frame) => boolean) => s.frames.some(test);

/** Each category's test, in order: a sample goes to the first one that matches. */
export function categories(own: readonly string[] = OWN): [string, (s: Stack) => boolean][] {
  return [
    // Not the main thread: V8's compiler and GC helpers, libuv's pool, workers.
    ['V8 threads: compiling', (s) => !s.main && any(s, (f) => COMPILE.test(f.sym))],
    ['V8 threads: GC and other', (s) => !s.main],
    ['garbage collection, main thread', (s) => any(s, (f) => GC.test(f.sym))],
    ['socket writes (kernel send + loopback delivery)', (s) => any(s, (f) => SOCKET_WRITE.test(f.sym))],
    ["the server's own code, with what it calls", (s) => any(s, (f) => projectFrame(f, own))],
    ['undici (the upstream client)', (s) => any(s, (f) => f.sym.includes('/node_modules/undici/'))],
    ['other libraries', (s) => any(s, (f) => f.sym.includes('/node_modules/'))],
    ["Node's HTTP server, streams and timers (JavaScript)", (s) => any(s, (f) => /^JS:.*node:/.test(f.sym))],
    ['kernel: socket reads, polling, timers', (s) => s.frames[0]?.kernel === true],
    ['other native: llhttp, V8 runtime, libuv, libc', () => true],
  ];
}
export const CATEGORIES = categories();

/**
 * `JS:*'handle file:///…/packages/gateway/src/http/fast-unpaid.ts:155:18` →
 * `handle (gateway/src/http/fast-unpaid.ts:155)`; a getter's name keeps its `get `.
 */
export function functionName(sym: string): string {
  const m = /^JS:[*~^+]?'?(.*?)\s+(?:file:\/\/)?\S*\/(packages|bench\/servers)\/(\S+?):(\d+):\d+$/.exec(sym);
  if (!m) return sym;
  const [, name, root, path, line] = m;
  return `${name || '(anonymous)'} (${root === 'packages' ? '' : 'bench/servers/'}${path}:${line})`;
}

/**
 * Parses `perf script -F comm,tid,ip,sym`: per sample a line with its thread's name and id,
 * then a frame per line (`ip sym`), then a blank line. The main thread's id is the process's.
 */
export function parsePerfScript(text: string, pid: number): Stack[] {
  const stacks: Stack[] = [];
  let cur: Stack | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') {
      if (cur && cur.frames.length > 0) stacks.push(cur);
      cur = null;
      continue;
    }
    if (cur === null) {
      // The sample's first line: its thread's name (which may hold spaces), then its id.
      const m = /^(.*?)\s*(\d+)$/.exec(line);
      cur = { thread: m?.[1] || '?', main: Number(m?.[2]) === pid, frames: [] };
      continue;
    }
    const space = line.indexOf(' ');
    const ip = space < 0 ? line : line.slice(0, space);
    const sym = space < 0 ? '[unknown]' : line.slice(space + 1).trim();
    cur.frames.push({ kernel: ip.length === 16 && ip.startsWith('ffff'), sym });
  }
  if (cur && cur.frames.length > 0) stacks.push(cur);
  return stacks;
}

/** Shares of `stacks` by category and by project function, scaled to `cpuUsPerReq`. */
export function attribute(
  stacks: Stack[],
  cpuUsPerReq: number,
  own: readonly string[] = OWN,
): Pick<NativeProfile, 'categories' | 'functions' | 'samples' | 'kernelSeen' | 'threads'> {
  const rules = own === OWN ? CATEGORIES : categories(own);
  const counts = new Map<string, number>(rules.map(([name]) => [name, 0]));
  const fns = new Map<string, number>();
  const threads = new Map<string, { n: number; leaves: Map<string, number> }>();
  let kernelSeen = false;
  for (const s of stacks) {
    if (!s.main) {
      const t = threads.get(s.thread) ?? { n: 0, leaves: new Map<string, number>() };
      threads.set(s.thread, t);
      t.n++;
      const leaf = s.frames.find((f) => !f.kernel)?.sym ?? '[kernel]';
      t.leaves.set(leaf, (t.leaves.get(leaf) ?? 0) + 1);
    }
    const [name] = rules.find(([, test]) => test(s))!;
    counts.set(name, counts.get(name)! + 1);
    if (!kernelSeen && s.frames.some((f) => f.kernel)) kernelSeen = true;
    const seen = new Set<string>();
    for (const f of s.frames) {
      if (!projectFrame(f, own)) continue;
      const fn = functionName(f.sym);
      if (seen.has(fn)) continue;
      seen.add(fn);
      fns.set(fn, (fns.get(fn) ?? 0) + 1);
    }
  }
  const per = stacks.length > 0 ? cpuUsPerReq / stacks.length : 0;
  return {
    samples: stacks.length,
    kernelSeen,
    categories: Object.fromEntries([...counts].map(([k, n]) => [k, n * per])),
    functions: ranked(fns, per),
    threads: [...threads]
      .sort((a, b) => b[1].n - a[1].n)
      .map(([name, t]) => ({ name, usPerReq: t.n * per, leaves: ranked(t.leaves, per) })),
  };
}

/** `counts` as names with µs per request, largest first. */
function ranked(counts: Map<string, number>, per: number): { name: string; usPerReq: number }[] {
  return [...counts].sort((a, b) => b[1] - a[1]).map(([name, n]) => ({ name, usPerReq: n * per }));
}

/**
 * One run of `cfg` with `perf record` on its server; null when the run measured nothing. Throws
 * when perf cannot sample (the caller reports it and goes on).
 */
export async function profileRun(
  cfg: Config,
  seconds: number,
  o: ScenarioOptions,
  file: string,
): Promise<NativeProfile | null> {
  const pid = cfg.server.pid;
  // cpu-clock: a software event, so it samples in a VM without hardware counters too.
  const perf = spawn(
    'perf',
    ['record', '-e', 'cpu-clock', '-F', '999', '-g', '-p', String(pid), '-o', file],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  trackTransient(perf);
  let stderr = '';
  perf.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | string>((resolve) => {
    perf.on('error', (err) => resolve(err.message));
    perf.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  try {
    // Attached, or failed at once (no permission, no perf for this kernel).
    const early = await Promise.race([exited, new Promise<null>((r) => setTimeout(r, 300, null))]);
    if (early !== null) throw new Error(`perf record did not start (${early}): ${stderr.trim()}`);
    let run: RunResult;
    try {
      run = await measure(cfg, seconds, o);
    } finally {
      perf.kill('SIGINT');
    }
    // perf record writes its file on SIGINT, then ends itself with that signal.
    const code = await exited;
    if (code !== 0 && code !== 'SIGINT') throw new Error(`perf record failed (${code}): ${stderr.trim()}`);
    if (!(run.requests > 0)) return null;
    const script = spawnSync('perf', ['script', '-i', file, '-F', 'comm,tid,ip,sym'], {
      encoding: 'utf8',
      maxBuffer: 1 << 30,
    });
    if (script.status !== 0) throw new Error(`perf script failed: ${script.stderr.trim()}`);
    const cpu = run.cpuUsPerReq[cfg.server.name]!;
    return {
      server: cfg.label,
      cpuUsPerReq: cpu,
      rps: run.rps,
      ...attribute(parsePerfScript(script.stdout, pid), cpu),
    };
  } finally {
    perf.kill('SIGKILL');
    await exited;
    rmSync(file, { force: true });
    rmSync(`${file}.old`, { force: true });
  }
}

/** The two profiles side by side, and each one's largest own functions. */
export function formatNative(
  title: string,
  gw: NativeProfile,
  base: NativeProfile,
  top = 12,
  /** False when the first profile is another configuration than the gateway (--perf-pair). */
  gateway = true,
): string {
  const w = Math.max(...CATEGORIES.map(([n]) => n.length), 32);
  const col = (s: string) => s.padStart(12);
  const num = (v: number) => col(v.toFixed(1));
  const lines = [
    `native profile (Linux perf, every thread), ${title}: CPU µs per request`,
    `${''.padEnd(w)}${col(gateway ? 'Tollgate' : 'subject')}${col('baseline')}${col('difference')}   (${gateway ? '' : `subject: ${gw.server}; `}baseline: ${base.server})`,
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
  if (!gw.kernelSeen || !base.kernelSeen)
    lines.push(
      "  ! perf saw no kernel code (kernel.perf_event_paranoid > 1 without root?): the kernel's time is spread over the other rows",
    );
  for (const p of [gw, base]) {
    lines.push(
      `  ${p.server}: own functions, inclusive µs/req (socket writes included): ` +
        p.functions
          .slice(0, top)
          .map((f) => `${f.name} ${f.usPerReq.toFixed(1)}`)
          .join('; '),
    );
    if (p.threads.length > 0)
      lines.push(
        `  ${p.server}: other threads, µs/req (largest leaves): ` +
          p.threads
            .slice(0, 4)
            .map(
              (t) =>
                `${t.name} ${t.usPerReq.toFixed(1)} (${t.leaves
                  .slice(0, 4)
                  .map((l) => `${l.name} ${l.usPerReq.toFixed(1)}`)
                  .join(', ')})`,
            )
            .join('; '),
      );
  }
  return lines.join('\n');
}

/** Each scenario's leanest baseline: what the gateway's extra cost is measured against. */
const LEANEST: Record<string, string> = { '402': 'lean402', free: 'floor', big: 'floor', paid: 'paidfloor' };

/**
 * --perf: for each scenario, the gateway and its leanest baseline, one run each under perf,
 * printed side by side. A scenario whose profile fails is reported and skipped: the bench's
 * own results do not depend on perf.
 */
export async function nativeProfiles(
  defs: ScenarioDef[],
  o: ScenarioOptions,
  dir: string,
  pair: { subject: string; baseline: string } | null = null,
): Promise<Record<string, { gateway: NativeProfile; baseline: NativeProfile }>> {
  const out: Record<string, { gateway: NativeProfile; baseline: NativeProfile }> = {};
  for (const def of defs) {
    // --perf-pair: two other configurations of the scenario, where it has both.
    const gw = def.configs.find((c) => c.key === (pair?.subject ?? 'gateway'));
    const lean = def.configs.find((c) => c.key === (pair?.baseline ?? LEANEST[def.key]));
    if (!gw || !lean) continue;
    if (gw.proofs && gw.proofs.next > gw.proofs.total) {
      o.log(`native profile ${def.title}: skipped, no proofs left`);
      continue;
    }
    try {
      const profiles: NativeProfile[] = [];
      for (const cfg of [gw, lean]) {
        const p = await profileRun(
          cfg,
          o.roundS,
          { ...o, drainMs: def.drainMs ?? o.drainMs },
          join(dir, 'perf.data'),
        );
        if (p) profiles.push(p);
      }
      if (profiles.length < 2) {
        o.log(`native profile ${def.title}: skipped, a run measured nothing`);
        continue;
      }
      out[def.key] = { gateway: profiles[0]!, baseline: profiles[1]! };
      console.log(`\n${formatNative(def.title, profiles[0]!, profiles[1]!, 12, gw.key === 'gateway')}`);
    } catch (err) {
      o.log(`native profile ${def.title}: failed, skipped: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  return out;
}
