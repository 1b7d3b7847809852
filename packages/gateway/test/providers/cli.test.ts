/**
 * The `tollgate` CLI run as a real process against a listening gateway: sign in
 * with key files of both chains, set up a project end to end, log out.
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { decodeSuiPrivateKey } from '@mysten/sui/cryptography';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { getBase58Decoder } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../client/src/cli/commands/index.ts';
import { runCli } from '../../../client/src/cli/run.ts';
import { ADMIN_TOKEN, call, type ProviderApp, startProviderApp } from './harness.ts';

const CLI = resolve(import.meta.dirname, '../../../client/src/cli.ts');

let h: ProviderApp;
let dir: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function tollgate(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        env: { PATH: process.env['PATH'] ?? '', HOME: dir, TOLLGATE_CONFIG_DIR: join(dir, 'config'), ...env },
        timeout: 20_000,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

function solanaKeyFile(path: string): string {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  writeFileSync(path, JSON.stringify([...seed, ...pub]));
  return getBase58Decoder().decode(pub);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
  h = await startProviderApp({ listen: true });
});
afterAll(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('tollgate CLI', () => {
  it('signs in with a Sui key, sets up a project, and logs out', async () => {
    const kp = Ed25519Keypair.generate();
    const keyFile = join(dir, 'sui.key');
    writeFileSync(keyFile, `${kp.getSecretKey()}\n`);
    const gw = ['--gateway', h.baseUrl];

    const login = await tollgate(['login', '--chain', 'sui', '--key', keyFile, ...gw]);
    expect(login.stderr).toContain(`logged in to ${h.baseUrl} as sui:${kp.toSuiAddress()}`);
    expect(login.code).toBe(0);
    const credPath = join(dir, 'config', 'credentials.json');
    expect(statSync(credPath).mode & 0o777).toBe(0o600);
    const creds = JSON.parse(readFileSync(credPath, 'utf8'));
    const token = creds.gateways[h.baseUrl].accessToken as string;
    expect(token).toMatch(/^tg_/);
    expect(login.stdout).not.toContain(token);

    // Later commands find the gateway from the stored login.
    const created = await tollgate([
      'projects',
      'create',
      '--slug',
      'cli-shop',
      '--name',
      'CLI Shop',
      '--category',
      'retail',
    ]);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({
      slug: 'cli-shop',
      owner: { chain: 'sui', address: kp.toSuiAddress() },
    });

    const secret = 'cli-origin-secret-0123456789-abcd';
    const api = await tollgate(
      [
        'apis',
        'add',
        '--project',
        'cli-shop',
        '--name',
        'up',
        '--base-url',
        'http://127.0.0.1:9/v1',
        '--auth-type',
        'header',
        '--auth-name',
        'x-api-key',
        '--auth-secret-env',
        'UPSTREAM_SECRET',
      ],
      { UPSTREAM_SECRET: secret },
    );
    expect(api.code).toBe(0);
    expect(api.stdout).not.toContain(secret);
    const apiId = JSON.parse(api.stdout).id as string;
    expect(JSON.parse(api.stdout).auth).toEqual({ type: 'header', name: 'x-api-key', secretLast4: '…abcd' });

    const ep = await tollgate([
      'endpoints',
      'add',
      '--project',
      'cli-shop',
      '--api',
      apiId,
      '--method',
      'get',
      '--path',
      '/items/list',
      '--price',
      '0.05',
    ]);
    expect(ep.code).toBe(0);
    expect(JSON.parse(ep.stdout)).toMatchObject({
      method: 'GET',
      path: 'items/list',
      price: '0.05',
      fee: '0.001',
      total: '0.051',
    });

    const recipient = kp.toSuiAddress();
    const rail = await tollgate([
      'rails',
      'set',
      '--project',
      'cli-shop',
      '--chain',
      'sui',
      '--network',
      'localnet',
      '--recipient',
      recipient,
    ]);
    expect(rail.code).toBe(0);
    expect(JSON.parse(rail.stdout)).toMatchObject({
      chain: 'sui',
      providerRecipient: recipient,
      platformRecipient: h.config.platformSuiAddress,
    });

    const listed = await tollgate(['endpoints', 'list', '--project', 'cli-shop']);
    expect(JSON.parse(listed.stdout).endpoints[0].protectedUrl).toBe(
      'https://gateway.tollgate.test/p/cli-shop/items/list',
    );
    const projects = await tollgate(['projects', 'list']);
    expect(JSON.parse(projects.stdout).projects.map((p: { slug: string }) => p.slug)).toEqual(['cli-shop']);
    const dir2 = await call(h.app, 'GET', '/v1/directory/apis/cli-shop');
    expect(dir2.body.endpoints[0]).toMatchObject({ total: '0.051', available: true });

    const dupe = await tollgate(['projects', 'create', '--slug', 'cli-shop', '--name', 'again']);
    expect(dupe.code).toBe(1);
    expect(dupe.stderr).toContain('conflict (slug_taken)');

    const logout = await tollgate(['logout']);
    expect(logout.code).toBe(0);
    expect(JSON.parse(readFileSync(credPath, 'utf8')).gateways).toEqual({});
    expect((await call(h.app, 'GET', '/v1/projects', { token })).status).toBe(401);
    const after = await tollgate(['projects', 'list', ...gw]);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain('not logged in');
  });

  it('signs in with a Solana CLI key file and with a Sui keystore', async () => {
    const solFile = join(dir, 'id.json');
    const solAddress = solanaKeyFile(solFile);
    const sol = await tollgate(['login', '--chain', 'solana', '--key', solFile, '--gateway', h.baseUrl]);
    expect(sol.code).toBe(0);
    expect(JSON.parse(sol.stdout).owner).toEqual({ chain: 'solana', address: solAddress });
    const who = await tollgate(['whoami']);
    expect(JSON.parse(who.stdout)).toEqual({
      kind: 'owner',
      owner: { chain: 'solana', address: solAddress },
    });
    // A token already revoked elsewhere still logs out cleanly.
    const credPath = join(dir, 'config', 'credentials.json');
    const solToken = JSON.parse(readFileSync(credPath, 'utf8')).gateways[h.baseUrl].accessToken;
    expect((await call(h.app, 'POST', '/v1/auth/logout', { token: solToken })).status).toBe(204);
    const out = await tollgate(['logout']);
    expect(out.code).toBe(0);
    expect(JSON.parse(readFileSync(credPath, 'utf8')).gateways[h.baseUrl]).toBeUndefined();

    const a = Ed25519Keypair.generate();
    const b = Ed25519Keypair.generate();
    // sui.keystore entries: base64(flag || 32-byte secret), flag 0 = Ed25519.
    const entry = (kp: Ed25519Keypair) =>
      Buffer.concat([Buffer.from([0]), decodeSuiPrivateKey(kp.getSecretKey()).secretKey]).toString('base64');
    const keystore = join(dir, 'sui.keystore');
    writeFileSync(keystore, JSON.stringify([entry(a), entry(b)]));
    const ambiguous = await tollgate(['login', '--chain', 'sui', '--key', keystore, '--gateway', h.baseUrl]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain('--address');
    const picked = await tollgate([
      'login',
      '--chain',
      'sui',
      '--key',
      keystore,
      '--address',
      b.toSuiAddress(),
      '--gateway',
      h.baseUrl,
    ]);
    expect(picked.code).toBe(0);
    expect(JSON.parse(picked.stdout).owner.address).toBe(b.toSuiAddress());
  });

  it('lets the operator act through TOLLGATE_TOKEN', async () => {
    const owner = Ed25519Keypair.generate().toSuiAddress();
    const res = await tollgate(
      [
        'projects',
        'create',
        '--slug',
        'op-made',
        '--name',
        'Op',
        '--owner-chain',
        'sui',
        '--owner-address',
        owner,
        '--gateway',
        h.baseUrl,
      ],
      { TOLLGATE_TOKEN: ADMIN_TOKEN },
    );
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout).owner).toEqual({ chain: 'sui', address: owner });
  });

  it('explains usage mistakes with exit code 2', async () => {
    const [missing, unknown, bogus, help] = await Promise.all([
      tollgate(['login', '--chain', 'sui']),
      tollgate(['projects', 'create', '--slug', 'x', '--bogus']),
      tollgate(['frobnicate']),
      tollgate(['--help']),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--key is required');
    expect(unknown.code).toBe(2);
    expect(bogus.code).toBe(2);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: tollgate <command>');
  });

  it('refuses to send or receive a token over plain http to a non-loopback gateway', async () => {
    for (const argv of [
      ['projects', 'list', '--gateway', 'http://gateway.example.com'],
      ['login', '--chain', 'sui', '--key', join(dir, 'none.key'), '--gateway', 'http://10.0.0.7:8402'],
    ]) {
      const err: string[] = [];
      const code = await runCli(argv, {
        env: { TOLLGATE_TOKEN: 'tg_not-sent', TOLLGATE_CONFIG_DIR: join(dir, 'config-http') },
        out: () => {},
        err: (t) => err.push(t),
      });
      expect(code, argv.join(' ')).toBe(1);
      expect(err.join('\n')).toContain('over plain http');
    }
  });

  it('has --help for every command in the table', async () => {
    const names = COMMANDS.map((c) => c.name);
    for (const required of [
      'login',
      'logout',
      'projects create',
      'projects list',
      'apis add',
      'endpoints add',
      'endpoints list',
      'rails set',
    ]) {
      expect(names).toContain(required);
    }
    for (const name of names) {
      const out: string[] = [];
      const code = await runCli([...name.split(' '), '--help'], {
        env: {},
        out: (t) => out.push(t),
        err: (t) => out.push(t),
      });
      expect(code, name).toBe(0);
      expect(out.join('\n')).toContain(`usage: tollgate ${name}`);
    }
  });
});
