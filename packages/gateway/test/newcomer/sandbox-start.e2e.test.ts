/**
 * A newcomer's `npm start` on a port of their choosing, then `npm run demo` from the same
 * directory with nothing else set: the gateway logs one startup summary (no secret in
 * any output), records its URL in ./data/gateway-url, and the demo finds it there and
 * pays on both chains. The URL file goes when the gateway stops.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxGateway } from '../../../client/src/cli/sandbox-gateway.ts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const GATEWAY = join(ROOT, 'packages/gateway/bin/tollgate-gateway.mjs');
const CLI = join(ROOT, 'packages/client/bin/tollgate.mjs');
const SECRET = 'sandbox-secret-'.repeat(3);
const ADMIN = 'admin-token-not-for-logs-0123456789';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Only what a shell would have: none of this process's TOLLGATE_* or PORT. */
const baseEnv = () => ({ PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? tmpdir() });

let child: ChildProcess;
let cwd: string;
let port: number;
let out = '';

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), 'tollgate-newcomer-'));
  port = await freePort();
  child = spawn(process.execPath, [GATEWAY], {
    cwd,
    env: {
      ...baseEnv(),
      PORT: String(port),
      LOG_LEVEL: 'info',
      TOLLGATE_SECRET: SECRET,
      TOLLGATE_ADMIN_TOKEN: ADMIN,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sandbox did not start:\n${out}`)), 45_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      // The banner is printed at once, the log line (pino) may come just after it.
      if (out.includes('Tollgate sandbox is running') && out.includes('"msg":"tollgate started')) {
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
  rmSync(cwd, { recursive: true, force: true });
});

describe('npm start on another port, then npm run demo', () => {
  it('logs one startup summary with every field', () => {
    const summaries = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .filter((l) => String(l.msg).startsWith('tollgate started'));
    expect(summaries).toHaveLength(1);
    const s = summaries[0];
    const base = `http://127.0.0.1:${port}`;
    expect(s).toMatchObject({
      level: 30,
      msg: `tollgate started: sandbox mode on ${base}`,
      mode: 'sandbox',
      listen: base,
      publicBaseUrl: base,
      database: { backend: 'sqlite', location: join(cwd, 'data', 'tollgate.db') },
      projects: 1,
      x402v2: ['solana', 'sui'],
    });
    expect(s.chains).toEqual([
      { chain: 'solana', network: 'localnet', rpc: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) },
      { chain: 'sui', network: 'localnet', rpc: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) },
    ]);
    expect(s.platform.solana).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    expect(s.platform.sui).toMatch(/^0x[0-9a-f]{64}$/);
    expect(s.sponsor).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  });

  it('never prints the secret or the operator token', () => {
    expect(out).not.toContain(SECRET);
    expect(out).not.toContain(ADMIN);
  });

  it('records its URL for local clients, which find it there', () => {
    const file = join(cwd, 'data', 'gateway-url');
    expect(readFileSync(file, 'utf8')).toBe(`http://127.0.0.1:${port}\n`);
    const prev = process.cwd();
    process.chdir(cwd);
    try {
      expect(sandboxGateway({}, undefined)).toEqual({
        url: `http://127.0.0.1:${port}`,
        from: 'data/gateway-url',
      });
      expect(sandboxGateway({ TOLLGATE_GATEWAY: 'http://gw:1/' }, undefined).url).toBe('http://gw:1');
    } finally {
      process.chdir(prev);
    }
    expect(sandboxGateway({ TOLLGATE_DATA_DIR: join(cwd, 'nowhere'), PORT: '9100' }, undefined)).toEqual({
      url: 'http://127.0.0.1:9100',
      from: '$PORT',
    });
  });

  it('the demo, run from the same directory with nothing set, pays on both chains', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'demo'], {
      cwd,
      env: baseEnv(),
      timeout: 60_000,
    });
    expect(stdout).toContain('== solana ==');
    expect(stdout).toContain('== sui ==');
    expect(stdout).toContain('Done: one paid request on each chain.');
  }, 90_000);

  it('removes the URL file when it stops', async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(join(cwd, 'data', 'gateway-url'))).toBe(false);
  });
});
