/** Readers for /proc: CPU time of a process tree, RSS, per-CPU busy and steal time. */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let clkTck: number | undefined;
/** Clock ticks per second for /proc times (normally 100). */
export function ticksPerSecond(): number {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  return clkTck;
}

/** Fields after the command name of /proc/<pid>/stat (index 0 is field 3, "state"). */
function statFields(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const f = statFields(Number(name));
    if (f) parentOf.set(Number(name), Number(f[1]));
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length) {
    const p = queue.pop()!;
    for (const [pid, ppid] of parentOf) {
      if (ppid === p) {
        out.push(pid);
        queue.push(pid);
      }
    }
  }
  return out;
}

/** utime + stime in seconds of a process (all its threads) and, optionally, its descendants. */
export function cpuSeconds(pid: number, withChildren = false): number {
  const t = cpuTimes(pid, withChildren);
  return t.user + t.system;
}

/** User and system CPU seconds, separately (system time shows syscall-heavy work such as fsync). */
export function cpuTimes(pid: number, withChildren = false): { user: number; system: number } {
  const pids = withChildren ? [pid, ...descendants(pid)] : [pid];
  let user = 0;
  let system = 0;
  for (const p of pids) {
    const f = statFields(p);
    if (f) {
      user += Number(f[11]);
      system += Number(f[12]);
    }
  }
  return { user: user / ticksPerSecond(), system: system / ticksPerSecond() };
}

/** Resident set size in bytes (sum over the tree when asked). */
export function rssBytes(pid: number, withChildren = false): number {
  const pids = withChildren ? [pid, ...descendants(pid)] : [pid];
  let kb = 0;
  for (const p of pids) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) kb += Number(m[1]);
    } catch {
      // gone
    }
  }
  return kb * 1024;
}

export interface CpuSample {
  /** Per CPU (cpu0, cpu1, …): busy, steal and total jiffies. */
  cpus: { busy: number; steal: number; total: number }[];
}

export function sampleCpus(): CpuSample {
  const cpus: CpuSample['cpus'] = [];
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const m = /^cpu(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const [user, nice, system, idle, iowait, irq, softirq, steal] = m[2]!
      .split(/\s+/)
      .map(Number) as number[];
    const busy = user! + nice! + system! + irq! + softirq!;
    cpus[Number(m[1])] = { busy, steal: steal!, total: busy + idle! + iowait! + steal! };
  }
  return { cpus };
}

/**
 * Waits until `cpu` is quiet: busy at most `maxBusy` (0..1) over a window of `windowMs`, tried
 * again up to `timeoutMs` in all. Every server under test shares one CPU, so a run must not
 * start while the one before is still at work there (its garbage collection, closing its
 * connections): that measured the next server partly under the last one's load (issue 14, the
 * twelfth session: the gateway's first 402 round after @x402/express's warm-up). Returns the
 * milliseconds waited, and whether the CPU went quiet.
 */
export async function waitForQuietCpu(
  cpu: number,
  { windowMs = 200, maxBusy = 0.1, timeoutMs = 5000 } = {},
): Promise<{ waitedMs: number; quiet: boolean }> {
  const start = Date.now();
  for (;;) {
    const a = sampleCpus();
    await new Promise((r) => setTimeout(r, windowMs));
    const busy = cpuDelta(a, sampleCpus())[cpu]?.busy ?? 0;
    const waitedMs = Date.now() - start;
    if (busy <= maxBusy) return { waitedMs, quiet: true };
    if (waitedMs >= timeoutMs) return { waitedMs, quiet: false };
  }
}

/** Busy share (0..1) and steal seconds of each CPU between two samples. */
export function cpuDelta(a: CpuSample, b: CpuSample): { busy: number; stealSec: number }[] {
  return b.cpus.map((c, i) => {
    const p = a.cpus[i]!;
    const total = c.total - p.total;
    return {
      busy: total > 0 ? (c.busy - p.busy) / total : 0,
      stealSec: (c.steal - p.steal) / ticksPerSecond(),
    };
  });
}
