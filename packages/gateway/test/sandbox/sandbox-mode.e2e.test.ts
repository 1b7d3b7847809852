/**
 * `npm start` with no configuration, as a newcomer runs it: sandbox mode comes up, and
 * the README's stock x402 client example (examples/stock-x402-client.mjs) buys from it
 * with USDC and no SOL.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const MAIN = join(ROOT, 'packages/gateway/src/main.ts');
const EXAMPLE = join(ROOT, 'examples/stock-x402-client.mjs');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let child: ChildProcess;
let base: string;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'tollgate-sandbox-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, PORT: String(port), TOLLGATE_DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sandbox did not start:\n${out}`)), 45_000);
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
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe('sandbox mode', () => {
  it('sells the demo API to the README stock x402 client, which holds no SOL', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [EXAMPLE], {
      env: { ...process.env, TOLLGATE_URL: base },
      cwd: ROOT,
      timeout: 30_000,
    });
    expect(stdout).toMatch(/^200 paid \{/);
    expect(stdout).toContain('Oslo');
  });

  it('reports the x402 v2 sponsor in /readyz', async () => {
    const res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { sponsor?: { state: string; lamports: string | null } };
    expect(body.sponsor?.state).toBe('ok');
    expect(BigInt(body.sponsor?.lamports ?? '0')).toBeGreaterThan(0n);
  });
});
