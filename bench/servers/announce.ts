/**
 * Tells the bench a server is ready: one JSON line on fd 3 (the pipe the bench
 * opened), or on stdout when the server was started by hand.
 */
import { writeSync } from 'node:fs';

export function announce(info: Record<string, unknown>): void {
  const line = `${JSON.stringify({ pid: process.pid, ...info })}\n`;
  try {
    writeSync(3, line);
  } catch {
    process.stdout.write(line);
  }
}

/** Exits cleanly on SIGTERM/SIGINT after `close` (bounded), so the bench can stop us by pid. */
export function exitOnSignal(close: () => Promise<unknown> | unknown = () => undefined): void {
  const stop = () => {
    setTimeout(() => process.exit(0), 3_000).unref();
    Promise.resolve()
      .then(close)
      .finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

/** Port number from argv/env, 0 (any free port) by default. */
export function portArg(): number {
  return Number(process.env['BENCH_PORT'] ?? 0);
}
