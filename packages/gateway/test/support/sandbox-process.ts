/**
 * The real sandbox (`node packages/gateway/src/main.ts`, as `npm start` runs it) in a
 * child process on a free port with a temporary data directory, for tests that need
 * the sandbox-only routes (`/sandbox/info`, `/sandbox/faucet`, `/sandbox/balances`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const MAIN = join(ROOT, 'packages/gateway/src/main.ts');

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface SandboxProcess {
  /** e.g. `http://127.0.0.1:41234` */
  base: string;
  close(): Promise<void>;
}

export async function startSandboxProcess(timeoutMs = 45_000): Promise<SandboxProcess> {
  // freePort() gives the port back before the sandbox binds it, so a test file running beside
  // this one can take it first (seen in CI): then start again on another port.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(timeoutMs);
    } catch (e) {
      if (attempt >= 3 || !/is already in use/.test((e as Error).message)) throw e;
    }
  }
}

async function startOnce(timeoutMs: number): Promise<SandboxProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-sandbox-'));
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [MAIN], {
    env: { ...process.env, PORT: String(port), TOLLGATE_DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  let out = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`sandbox did not start:\n${out}`)), timeoutMs);
      const onData = (d: Buffer) => {
        out += d.toString();
        if (out.includes('Tollgate sandbox is running')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`sandbox exited with ${code}:\n${out}`));
      });
    });
  } catch (e) {
    await close();
    throw e;
  }
  return { base: `http://127.0.0.1:${port}`, close };
}
