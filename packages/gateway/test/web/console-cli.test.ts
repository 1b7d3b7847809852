/**
 * `tollgate console` run as a real process against a listening gateway: it signs in with
 * a wallet key file (or hands over the stored login), prints `<gateway>/console#token=…`
 * with a token that works, and asks the desktop to open it (a recording `xdg-open` on
 * PATH stands in for the desktop, so no browser starts) unless --print is given.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { newSolanaKey } from '@tollgate/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type ProviderApp, startProviderApp } from '../providers/harness.ts';

const CLI = resolve(import.meta.dirname, '../../../client/src/cli.ts');

let h: ProviderApp;
let dir: string;
let bin: string;
const opened = () => join(dir, 'opened.txt');

function tollgate(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        env: {
          PATH: `${bin}:${process.env['PATH'] ?? ''}`,
          HOME: dir,
          TOLLGATE_CONFIG_DIR: join(dir, 'config'),
          ...env,
        },
        timeout: 20_000,
      },
      (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** The token in a printed console URL, after checking the URL's shape. */
function tokenOf(url: string): string {
  expect(url).toMatch(new RegExp(`^${h.baseUrl}/console#token=tg_[A-Za-z0-9_-]+$`));
  return decodeURIComponent(url.split('#token=')[1]!);
}

/** Waits for the detached opener to have written its file. */
async function openedUrl(): Promise<string> {
  for (let i = 0; i < 100 && !existsSync(opened()); i++) await new Promise((r) => setTimeout(r, 50));
  return readFileSync(opened(), 'utf8').trim();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-console-'));
  bin = join(dir, 'bin');
  mkdirSync(bin);
  const opener = join(bin, 'xdg-open');
  writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$1" > '${opened()}'\n`);
  chmodSync(opener, 0o755);
  h = await startProviderApp({ listen: true });
});
afterAll(async () => {
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('tollgate console', () => {
  it('signs in with a Solana key file and prints a console URL whose token works, opening nothing with --print', async () => {
    const key = newSolanaKey();
    const keyFile = join(dir, 'solana.json');
    writeFileSync(keyFile, JSON.stringify([...key.secretKey]));
    const r = await tollgate([
      'console',
      '--chain',
      'solana',
      '--key',
      keyFile,
      '--print',
      '--gateway',
      h.baseUrl,
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const token = tokenOf(r.stdout.trim());
    const who = await call(h.app, 'GET', '/v1/auth/session', { token });
    expect(who.body).toEqual({ kind: 'owner', owner: { chain: 'solana', address: key.address } });
    expect(existsSync(opened())).toBe(false);
    // The console's session is its own: nothing was stored for the CLI.
    expect(existsSync(join(dir, 'config', 'credentials.json'))).toBe(false);
  });

  it('opens the URL with the desktop opener and hands over the stored login with a Sui key', async () => {
    const kp = Ed25519Keypair.generate();
    const keyFile = join(dir, 'sui.key');
    writeFileSync(keyFile, `${kp.getSecretKey()}\n`);
    const login = await tollgate(['login', '--chain', 'sui', '--key', keyFile, '--gateway', h.baseUrl]);
    expect(login.code).toBe(0);
    const stored = JSON.parse(readFileSync(join(dir, 'config', 'credentials.json'), 'utf8')).gateways[
      h.baseUrl
    ];

    const r = await tollgate(['console', '--json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { url: string; owner: unknown; expiresAt: string };
    expect(tokenOf(out.url)).toBe(stored.accessToken);
    expect(out.owner).toEqual({ chain: 'sui', address: kp.toSuiAddress() });
    expect(out.expiresAt).toBe(stored.expiresAt);
    expect(await openedUrl()).toBe(out.url);
  });

  it('says how to sign in when there is no key and no login, and refuses plain http off loopback', async () => {
    const empty = { TOLLGATE_CONFIG_DIR: join(dir, 'empty') };
    const none = await tollgate(['console', '--print', '--gateway', h.baseUrl], empty);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(
      `tollgate: not logged in to ${h.baseUrl}: run \`tollgate login\` first, or pass --chain and --key to sign in for the console\n`,
    );
    const revoked = await tollgate(['console', '--print', '--gateway', h.baseUrl], {
      ...empty,
      TOLLGATE_TOKEN: 'tg_not-a-real-token',
    });
    expect(revoked.code).toBe(1);
    expect(revoked.stderr).toMatch(/^tollgate: unauthorized/);
    const remote = await tollgate(['console', '--print', '--gateway', 'http://gateway.example.com'], empty);
    expect(remote.code).toBe(1);
    expect(remote.stderr).toContain('over plain http');
  });
});
