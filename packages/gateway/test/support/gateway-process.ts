/**
 * A production gateway (`node packages/gateway/src/main.ts`, or another entry) in a child process, for tests
 * that run several gateways against one store. The caller passes the whole configuration
 * in `env` (on top of this process's environment), including `PORT`/`HOST` (port 0 is
 * fine: the URL is read from the "Server listening at" log line), and kills `child` itself.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

export interface GatewayProcess {
  /** e.g. `http://127.0.0.1:41234` */
  url: string;
  child: ChildProcess;
}

export interface StartOptions {
  /** The script node runs: `src/main.ts` unless given (e.g. `bin/tollgate-gateway.mjs`). */
  entry?: string;
  timeoutMs?: number;
}

export function startGatewayProcess(
  env: Record<string, string>,
  { entry = MAIN, timeoutMs = 20_000 }: StartOptions = {},
): Promise<GatewayProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${out}`)), timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1]!, child });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code}:\n${out}`));
    });
  });
}
