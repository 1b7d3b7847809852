/**
 * Child processes of the bench, each pinned to a CPU with taskset. Every child is
 * registered the moment it is spawned and killed by its own pid when the bench ends,
 * whether it ends normally, on an error or on a signal.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

export interface Child {
  name: string;
  pid: number;
  proc: ChildProcess;
  /** The JSON the child announced on fd 3 when it was ready. */
  info: Record<string, unknown>;
  /** The last few KB of its stderr, for error messages. */
  stderr(): string;
  /** Resolves with the first stderr line matching `re` written from now on. */
  waitStderr(re: RegExp, timeoutMs: number): Promise<string>;
  stop(): Promise<void>;
}

const children = new Set<Child>();
const STDERR_KEEP = 8 * 1024;

export interface SpawnOptions {
  name: string;
  /** CPU list for taskset, e.g. "0". */
  cpu: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** Where stdout goes (a file path, or /dev/null). */
  stdout?: string;
  /** Resolve when the child writes a JSON line on fd 3 (true) or right after spawn (false). */
  announces?: boolean;
  readyTimeoutMs?: number;
}

export async function spawnPinned(opts: SpawnOptions): Promise<Child> {
  const outFd = openSync(opts.stdout ?? '/dev/null', 'a');
  const proc = spawn('taskset', ['-c', opts.cpu, opts.command, ...opts.args], {
    stdio: ['ignore', outFd, 'pipe', 'pipe'],
    env: { ...process.env, ...opts.env },
  });
  closeSync(outFd);
  if (proc.pid === undefined) throw new Error(`${opts.name}: could not spawn ${opts.command}`);
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-STDERR_KEEP);
  });
  const child: Child = {
    name: opts.name,
    pid: proc.pid,
    proc,
    info: {},
    stderr: () => err,
    waitStderr: (re, timeoutMs) =>
      new Promise((resolve, reject) => {
        let buf = '';
        const onData = (d: Buffer) => {
          buf += d.toString();
          const line = buf.split('\n').find((l) => re.test(l));
          if (line === undefined) return;
          clearTimeout(timer);
          proc.stderr?.off('data', onData);
          resolve(line);
        };
        const timer = setTimeout(() => {
          proc.stderr?.off('data', onData);
          reject(new Error(`${opts.name}: no stderr line matching ${re} within ${timeoutMs} ms`));
        }, timeoutMs);
        proc.stderr?.on('data', onData);
      }),
    stop: () => stopChild(child),
  };
  children.add(child);

  if (opts.announces === false) {
    proc.stdio[3]?.destroy();
    return child;
  }
  const timeoutMs = opts.readyTimeoutMs ?? 60_000;
  child.info = await new Promise<Record<string, unknown>>((resolve, reject) => {
    let buf = '';
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`${opts.name} did not start: ${why}\n--- its stderr ---\n${err.trim() || '(empty)'}`));
    };
    const timer = setTimeout(() => fail(`no ready line within ${timeoutMs} ms`), timeoutMs);
    proc.once('exit', (code, signal) => fail(`exited with ${signal ?? code}`));
    proc.once('error', (e) => fail(e.message));
    proc.stdio[3]?.on('data', (d: Buffer) => {
      buf += d.toString();
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      proc.removeAllListeners('exit');
      try {
        resolve(JSON.parse(buf.slice(0, nl)) as Record<string, unknown>);
      } catch {
        reject(new Error(`${opts.name}: unreadable ready line ${JSON.stringify(buf.slice(0, nl))}`));
      }
    });
  });
  proc.once('exit', (code, signal) => {
    if (children.has(child)) {
      console.error(
        `bench: ${opts.name} (pid ${child.pid}) exited early with ${signal ?? code}\n--- its stderr ---\n${err.trim()}`,
      );
    }
    children.delete(child);
  });
  return child;
}

async function stopChild(child: Child): Promise<void> {
  if (!children.delete(child)) return;
  const { proc } = child;
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  try {
    process.kill(child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }, 5_000);
  await exited;
  clearTimeout(timer);
}

/** Short-lived children (wrk runs): killed with the rest if the bench ends while they run. */
const transient = new Set<ChildProcess>();

/** Tracks a short-lived child until it exits. */
export function trackTransient(proc: ChildProcess): void {
  transient.add(proc);
  proc.once('exit', () => transient.delete(proc));
}

/** Stops every child still running, most recent first. */
export async function stopAll(): Promise<void> {
  for (const p of transient) p.kill('SIGKILL');
  transient.clear();
  const all = [...children].reverse();
  for (const c of all) await stopChild(c);
}

/** Synchronous last resort for `process.on('exit')`: SIGKILL by pid. */
export function killAllNow(): void {
  for (const p of transient) p.kill('SIGKILL');
  transient.clear();
  for (const c of children) {
    try {
      process.kill(c.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  children.clear();
}

/**
 * However a bench command ends, nothing it started outlives it: on exit every child is
 * killed by pid and `cleanup` runs; the first SIGINT, SIGTERM or SIGHUP stops the children
 * gracefully, runs `cleanup` and exits 130, and a later one (Ctrl-C can arrive twice, from
 * the terminal and from a wrapper passing it on) is ignored meanwhile. Returns whether a
 * signal is stopping the command, so its error path can stay quiet then.
 */
export function stopChildrenOnExit(name: string, cleanup: () => void = () => {}): () => boolean {
  let stopping = false;
  process.on('exit', () => {
    killAllNow();
    cleanup();
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      console.error(`${name}: ${signal}, stopping`);
      void stopAll().finally(() => {
        cleanup();
        process.exit(130);
      });
    });
  }
  return () => stopping;
}
