/**
 * What an operator sees when the gateway cannot start: every configuration problem in
 * one message, one line per variable, exit 78; a database or a listen address that fails
 * is one line naming the variable; never a stack trace, never a secret. And `config
 * check` validates without starting and prints the effective settings, redacted.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const ENTRY = join(ROOT, 'packages/gateway/bin/tollgate-gateway.mjs');
const SECRET = 'S3cret-'.repeat(6);
const PASSWORD = 'hunter2-pw';

/** Runs the `npm start` entry with exactly these variables (nothing from this process's environment). */
function start(env: Record<string, string>, args: string[] = [], timeoutMs = 40_000) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [ENTRY, ...args], {
      cwd: mkdtempSync(join(tmpdir(), 'tg-start-')),
      env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`still running after ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const noStack = (text: string) => expect(text).not.toMatch(/^\s+at /m);

let closedPort: number;
let busy: Server;
let busyPort: number;
beforeAll(async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  busyPort = (busy.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

/** A production configuration that opens nothing remote at start (Solana only, SQLite in a temp dir). */
function production(extra: Record<string, string> = {}): Record<string, string> {
  return {
    TOLLGATE_NETWORK: 'mainnet',
    TOLLGATE_SECRET: SECRET,
    DATABASE_URL: `sqlite:${join(mkdtempSync(join(tmpdir(), 'tg-db-')), 'tollgate.db')}`,
    PUBLIC_BASE_URL: 'https://pay.example.com',
    SOLANA_RPC_URL: `http://127.0.0.1:${closedPort}`,
    PLATFORM_SOLANA_ADDRESS: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
    ...extra,
  };
}

describe('a gateway that cannot start', () => {
  it('names all three bad variables in one message, exit 78, no stack trace', async () => {
    const r = await start({
      PORT: 'eighty',
      HOST: 'bad host!',
      DATABASE_URL: `mysql://root:${PASSWORD}@db/tollgate`,
    });
    expect(r.code).toBe(78);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toBe('tollgate: invalid configuration (3 problems):');
    expect(lines.slice(1, 4).map((l) => l.trim().split(':')[0])).toEqual(['PORT', 'HOST', 'DATABASE_URL']);
    expect(r.stderr).toContain('PORT: expected a port number from 0 to 65535, got "eighty"');
    expect(r.stderr).toContain('HOST: expected an IP address or a host name');
    expect(r.stderr).toContain('DATABASE_URL: expected sqlite:<path>, sqlite::memory: or postgres://');
    expect(lines).toHaveLength(5); // the header, three problems, where to look
    noStack(r.stderr);
    expect(r.stderr).not.toContain(PASSWORD);
  });

  it('lists what production mode needs beside a bad value', async () => {
    const r = await start({ TOLLGATE_NETWORK: 'mainnet', TOLLGATE_SECRET: 'short' });
    expect(r.code).toBe(78);
    for (const name of [
      'TOLLGATE_SECRET',
      'DATABASE_URL',
      'PUBLIC_BASE_URL',
      'SOLANA_RPC_URL or SUI_RPC_URL',
    ])
      expect(r.stderr).toContain(`  ${name}`);
    expect(r.stderr).toContain('TOLLGATE_SECRET: expected a random string of at least 32 characters');
    expect(r.stderr).not.toContain('short"');
    noStack(r.stderr);
  });

  it('says in one line that PostgreSQL is unreachable, without its password', async () => {
    const r = await start(
      production({ DATABASE_URL: `postgres://tollgate:${PASSWORD}@127.0.0.1:${closedPort}/tollgate` }),
    );
    expect(r.code).toBe(69);
    expect(r.stderr.trim().split('\n')).toEqual([
      'tollgate: cannot start:',
      `  DATABASE_URL: cannot open PostgreSQL at tollgate@127.0.0.1:${closedPort}/tollgate: connection refused (is it running, on that port?)`,
    ]);
    expect(r.stderr + r.stdout).not.toContain(PASSWORD);
  });

  it('refuses a SQLite path it could not create, and a file that is not a database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-db-'));
    const notes = join(dir, 'notes.txt');
    writeFileSync(notes, 'my notes, not a database');
    for (const [url, why] of [
      ['sqlite:/proc/1/tollgate/tollgate.db', /not writable|read-only/],
      [`sqlite:${join(notes, 'tollgate.db')}`, /is a file/],
      [`sqlite:${notes}`, /is something else/],
    ] as const) {
      const r = await start(production({ DATABASE_URL: url }));
      expect(r.code, url).toBe(78);
      const lines = r.stderr.trim().split('\n');
      expect(lines[1]).toMatch(/^ {2}DATABASE_URL: expected a /);
      expect(lines[1]).toMatch(why);
      noStack(r.stderr);
    }
  });

  it('names HOST when it does not resolve, and PORT when it is taken', async () => {
    const unresolvable = await start(production({ HOST: 'no-such-host.invalid' }));
    expect(unresolvable.code).toBe(78);
    expect(unresolvable.stderr.trim()).toBe(
      'tollgate: cannot start:\n  HOST: no-such-host.invalid does not resolve to an address',
    );
    const taken = await start(production({ PORT: String(busyPort) }));
    expect(taken.code).toBe(78);
    expect(taken.stderr.trim()).toBe(
      `tollgate: cannot start:\n  PORT: ${busyPort} is already in use on 127.0.0.1 (another gateway running?); choose another PORT`,
    );
  });

  it('names the sponsor key when its file cannot be read as a keypair', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-key-'));
    const key = join(dir, 'sponsor.json');
    writeFileSync(key, '{"not": "a key"}');
    const r = await start(production({ TOLLGATE_SOLANA_SPONSOR_KEY: key, PORT: 'x' }));
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`TOLLGATE_SOLANA_SPONSOR_KEY: expected a Solana keypair`);
    expect(r.stderr).toContain('PORT: expected');
    expect(r.stderr).not.toContain('not": "a key');
  });
});

describe('config check', () => {
  it('prints the effective settings with secrets and URL credentials redacted, exit 0', async () => {
    const r = await start(
      production({
        SOLANA_RPC_URL: 'https://rpc.example.com/v2/abcdefghijklmnopqrstuvwxyz012345?api-key=k3y-secret',
        DATABASE_URL: `postgres://tollgate:${PASSWORD}@db.internal:5432/tollgate`,
        TOLLGATE_ADMIN_TOKEN: 'admin-token-very-secret-0123456789',
        PLATFORM_FEE_BPS: '250',
      }),
      ['config', 'check'],
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^tollgate: configuration OK: production mode \(mainnet\)/);
    expect(r.stdout).toMatch(/^ {2}PLATFORM_FEE_BPS +250 +\[env\]$/m);
    expect(r.stdout).toMatch(/^ {2}PLATFORM_FEE_MIN +0\.001$/m);
    expect(r.stdout).toMatch(/^ {2}TOLLGATE_SECRET +\[redacted\] +\[env\]$/m);
    expect(r.stdout).toMatch(/^ {2}TOLLGATE_ADMIN_TOKEN +\[redacted\] +\[env\]$/m);
    expect(r.stdout).toMatch(/^ {2}DATABASE_URL +postgres:\/\/\*\*\*@db\.internal:5432\/tollgate +\[env\]$/m);
    expect(r.stdout).toMatch(
      /^ {2}SOLANA_RPC_URL +https:\/\/rpc\.example\.com\/v2\/\*\*\*\?api-key=\*\*\* +\[env\]$/m,
    );
    for (const secret of [SECRET, PASSWORD, 'k3y-secret', 'abcdefghijklmnopqrst', 'admin-token-very-secret'])
      expect(r.stdout).not.toContain(secret);
  });

  it('lists every problem and exits 78 without starting anything', async () => {
    const r = await start({ PORT: '99999', LOG_LEVEL: 'loud' }, ['config', 'check']);
    expect(r.code).toBe(78);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('PORT: expected a port number from 0 to 65535, got "99999"');
    expect(r.stderr).toContain(
      'LOG_LEVEL: expected fatal, error, warn, info, debug, trace or silent, got "loud"',
    );
    noStack(r.stderr);
  });

  it('reads the --config file too, and refuses a command it does not know', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-cfg-'));
    const file = join(dir, 'tollgate.json');
    writeFileSync(file, JSON.stringify({ PORT: 9100 }));
    const ok = await start({}, ['--config', file, 'config', 'check']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^ {2}PORT +9100 +\[file\]$/m);
    expect(ok.stdout).toMatch(/^ {2}TOLLGATE_SECRET +\(generated at first start/m);
    const unknown = await start({}, ['config', 'chek']);
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toContain('unknown command "config chek"');
  });
});
