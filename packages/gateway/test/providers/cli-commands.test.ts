/**
 * The `tollgate` CLI's management and wallet commands, run as a real process:
 * update/show/delete for projects, APIs, endpoints and rails against a listening
 * gateway; `faucet` and `balance` against the real sandbox (`npm start`); `--json`
 * on every command; `--gateway` and the logged-in gateway honoured by every command
 * that talks to one; errors as one `tollgate: …` line with the gateway's code, never
 * a stack trace.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../client/src/cli/commands/index.ts';
import { runCli } from '../../../client/src/cli/run.ts';
import { freePort, type SandboxProcess, startSandboxProcess } from '../support/sandbox-process.ts';
import { ADMIN_TOKEN, ORIGIN, type ProviderApp, startProviderApp } from './harness.ts';

const CLI = resolve(import.meta.dirname, '../../../client/src/cli.ts');
/** A gateway that is not there: a free port nobody listens on. */
const DOWN = `http://127.0.0.1:${await freePort()}`;
const STACK = /\n\s+at /;

let h: ProviderApp;
let dir: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function tollgate(args: string[], env: Record<string, string> = {}, config = 'config'): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        env: { PATH: process.env['PATH'] ?? '', HOME: dir, TOLLGATE_CONFIG_DIR: join(dir, config), ...env },
        timeout: 30_000,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** The same in this process (runCli with its own env), for the loops over every command. */
async function inProcess(argv: string[], env: Record<string, string>, config = 'config'): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {
    env: { HOME: dir, TOLLGATE_CONFIG_DIR: join(dir, config), ...env },
    out: (t) => out.push(t),
    err: (t) => err.push(t),
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** Runs a command that must succeed and print one JSON document on stdout. */
async function json(args: string[], env: Record<string, string> = {}) {
  const r = await tollgate(args, env);
  expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(0);
  expect(r.stderr).not.toMatch(STACK);
  return JSON.parse(r.stdout);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-cli-cmds-'));
  h = await startProviderApp({ listen: true });
});
afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('tollgate update, show and delete', () => {
  it('manages a project, its APIs, endpoints and rails through the logged-in gateway', async () => {
    const kp = Ed25519Keypair.generate();
    const keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${kp.getSecretKey()}\n`);
    await json(['login', '--chain', 'sui', '--key', keyFile, '--gateway', h.baseUrl]);
    // From here on, no --gateway: the logged-in gateway is used.
    await json(['projects', 'create', '--slug', 'upd-shop', '--name', 'Before']);

    const project = await json([
      'projects',
      'update',
      '--slug',
      'upd-shop',
      '--name',
      'After',
      '--description',
      'now with words',
      '--category',
      'retail',
      '--x402-exact',
      'true',
    ]);
    expect(project).toMatchObject({ slug: 'upd-shop', name: 'After', category: 'retail' });
    expect(await json(['projects', 'show', '--slug', 'upd-shop'])).toMatchObject({
      name: 'After',
      description: 'now with words',
    });
    const nothing = await tollgate(['projects', 'update', '--slug', 'upd-shop']);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('nothing to update');

    const api = await json([
      'apis',
      'add',
      '--project',
      'upd-shop',
      '--name',
      'up',
      '--base-url',
      `${ORIGIN}/v1`,
    ]);
    expect(await json(['apis', 'show', '--project', 'upd-shop', '--id', api.id])).toMatchObject({
      id: api.id,
      name: 'up',
      auth: null,
    });
    const secret = 'rotated-origin-secret-wxyz';
    const rotated = await json(
      [
        'apis',
        'update',
        '--project',
        'upd-shop',
        '--id',
        api.id,
        '--name',
        'upstream',
        '--base-url',
        `${ORIGIN}/v2`,
        '--auth-type',
        'bearer',
        '--auth-secret-env',
        'NEW_SECRET',
      ],
      { NEW_SECRET: secret },
    );
    expect(rotated).toMatchObject({ name: 'upstream', baseUrl: `${ORIGIN}/v2`, auth: { type: 'bearer' } });
    expect(JSON.stringify(rotated)).not.toContain(secret);
    const cleared = await json(['apis', 'update', '--project', 'upd-shop', '--id', api.id, '--remove-auth']);
    expect(cleared.auth).toBeNull();

    const ep = await json([
      'endpoints',
      'add',
      '--project',
      'upd-shop',
      '--api',
      api.id,
      '--method',
      'GET',
      '--path',
      'things',
      '--price',
      '0.05',
    ]);
    const schemaFile = join(dir, 'in.json');
    writeFileSync(schemaFile, JSON.stringify({ type: 'object' }));
    const changed = await json([
      'endpoints',
      'update',
      '--project',
      'upd-shop',
      '--id',
      ep.id,
      '--price',
      '0.2',
      '--path',
      'stuff',
      '--description',
      'all the stuff',
      '--disabled',
      '--input-schema',
      schemaFile,
    ]);
    expect(changed).toMatchObject({
      id: ep.id,
      path: 'stuff',
      price: '0.2',
      enabled: false,
      description: 'all the stuff',
      inputSchema: { type: 'object' },
    });
    const reenabled = await json([
      'endpoints',
      'update',
      '--project',
      'upd-shop',
      '--id',
      ep.id,
      '--enabled',
      '--input-schema',
      'none',
    ]);
    expect(reenabled).toMatchObject({ enabled: true, inputSchema: null });
    expect(await json(['endpoints', 'show', '--project', 'upd-shop', '--id', ep.id])).toMatchObject({
      path: 'stuff',
      price: '0.2',
    });
    const both = await tollgate([
      'endpoints',
      'update',
      '--project',
      'upd-shop',
      '--id',
      ep.id,
      '--enabled',
      '--disabled',
    ]);
    expect(both.code).toBe(2);

    const recipient = kp.toSuiAddress();
    const other = Ed25519Keypair.generate().toSuiAddress();
    const railArgs = ['--project', 'upd-shop', '--chain', 'sui', '--network', 'localnet'];
    await json(['rails', 'set', ...railArgs, '--recipient', recipient]);
    expect(await json(['rails', 'update', ...railArgs, '--recipient', other])).toMatchObject({
      chain: 'sui',
      providerRecipient: other,
    });

    // Deletes print nothing on stdout unless --json asks for a result.
    const railGone = await tollgate(['rails', 'delete', '--project', 'upd-shop', '--chain', 'sui']);
    expect(railGone).toMatchObject({ code: 0, stdout: '' });
    expect(railGone.stderr).toContain('deleted');
    expect((await json(['rails', 'list', '--project', 'upd-shop'])).rails).toEqual([]);
    expect(await json(['endpoints', 'delete', '--project', 'upd-shop', '--id', ep.id, '--json'])).toEqual({
      deleted: { project: 'upd-shop', endpoint: ep.id },
    });
    expect((await json(['endpoints', 'list', '--project', 'upd-shop'])).endpoints).toEqual([]);
    expect(await json(['apis', 'delete', '--project', 'upd-shop', '--id', api.id, '--json'])).toEqual({
      deleted: { project: 'upd-shop', api: api.id },
    });
    expect(await json(['projects', 'delete', '--slug', 'upd-shop', '--json'])).toEqual({
      deleted: { project: 'upd-shop' },
    });
    expect((await json(['projects', 'list'])).projects).toEqual([]);

    const gone = await tollgate(['projects', 'show', '--slug', 'upd-shop']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^tollgate: not_found \(project_not_found\): /);
    expect(gone.stderr).not.toMatch(STACK);
    // With --json the failure is also a JSON document on stdout.
    const goneJson = await tollgate(['apis', 'delete', '--project', 'upd-shop', '--id', 'x', '--json']);
    expect(goneJson.code).toBe(1);
    expect(JSON.parse(goneJson.stdout)).toMatchObject({
      error: 'not_found',
      reason: 'project_not_found',
      status: 404,
    });
    expect(await json(['logout', '--json'])).toEqual({ gateway: h.baseUrl, loggedOut: true });
  }, 120_000); // some thirty CLI processes, one after the other
});

describe('errors', () => {
  it('prints one human line, never a stack trace', async () => {
    const corrupt = join(dir, 'corrupt');
    mkdirSync(corrupt, { recursive: true });
    writeFileSync(join(corrupt, 'credentials.json'), '{not json');
    const cases: [string[], RegExp][] = [
      [['projects', 'list'], /^tollgate: cannot read .*credentials\.json/],
      [['projects', 'list', '--gateway', 'not a url'], /^tollgate: --gateway must be a URL/],
      [['projects', 'create', '--slug', 'x', '--bogus'], /^tollgate: /],
    ];
    for (const [argv, wanted] of cases) {
      const r = await tollgate(argv, {}, 'corrupt');
      expect(r.code, argv.join(' ')).toBeGreaterThan(0);
      expect(r.stderr, argv.join(' ')).toMatch(wanted);
      expect(r.stderr, argv.join(' ')).not.toMatch(STACK);
    }
    const usage = await tollgate(['projects', 'update', '--json']);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stdout)).toMatchObject({ error: 'usage', message: '--slug is required' });
  });
});

describe('--gateway and the logged-in gateway', () => {
  const key = () => join(dir, 'sol-down.json');
  /** Every command that talks to a gateway, with enough arguments to get that far. */
  const commands = (): string[][] => {
    const k = key();
    const p = ['--project', 'p'];
    return [
      ['login', '--chain', 'solana', '--key', k],
      ['whoami'],
      ['projects', 'create', '--slug', 'p', '--name', 'P'],
      ['projects', 'list'],
      ['projects', 'show', '--slug', 'p'],
      ['projects', 'update', '--slug', 'p', '--name', 'Q'],
      ['projects', 'delete', '--slug', 'p'],
      ['apis', 'add', ...p, '--name', 'a', '--base-url', ORIGIN],
      ['apis', 'list', ...p],
      ['apis', 'show', ...p, '--id', 'a'],
      ['apis', 'update', ...p, '--id', 'a', '--name', 'b'],
      ['apis', 'delete', ...p, '--id', 'a'],
      ['endpoints', 'add', ...p, '--api', 'a', '--method', 'GET', '--path', 'x', '--price', '1'],
      ['endpoints', 'list', ...p],
      ['endpoints', 'show', ...p, '--id', 'e'],
      ['endpoints', 'update', ...p, '--id', 'e', '--price', '2'],
      ['endpoints', 'delete', ...p, '--id', 'e'],
      ['rails', 'set', ...p, '--chain', 'sui', '--network', 'localnet', '--recipient', '0x1'],
      ['rails', 'update', ...p, '--chain', 'sui', '--network', 'localnet', '--recipient', '0x1'],
      ['rails', 'list', ...p],
      ['rails', 'delete', ...p, '--chain', 'sui'],
      ['faucet', '--chain', 'solana', '--key', k],
      ['balance', '--chain', 'solana', '--key', k],
      ['pay', '--chain', 'solana', '--key', k, `${DOWN}/p/demo/weather`],
    ];
  };

  beforeAll(async () => {
    expect((await tollgate(['keygen', '--chain', 'solana', '--out', key()])).code).toBe(0);
    // A stored login whose gateway is down.
    mkdirSync(join(dir, 'down'), { recursive: true });
    writeFileSync(
      join(dir, 'down', 'credentials.json'),
      JSON.stringify({
        defaultGateway: DOWN,
        gateways: {
          [DOWN]: {
            accessToken: 'tg_x',
            expiresAt: '2999-01-01T00:00:00.000Z',
            owner: { chain: 'sui', address: '0x1' },
          },
        },
      }),
    );
  });

  it('every command that talks to a gateway uses --gateway', async () => {
    const runs = await Promise.all(
      commands().map((argv) => inProcess([...argv, '--gateway', DOWN], { TOLLGATE_TOKEN: ADMIN_TOKEN })),
    );
    commands().forEach((argv, i) => {
      const r = runs[i]!;
      expect(r.code, argv.join(' ')).toBe(1);
      expect(r.stderr, argv.join(' ')).toMatch(/^tollgate: /);
      expect(r.stderr, argv.join(' ')).toContain(DOWN);
      expect(r.stderr, argv.join(' ')).not.toMatch(STACK);
    });
  });

  it('and without --gateway, the gateway of the last login', async () => {
    const runs = await Promise.all(commands().map((argv) => inProcess(argv, {}, 'down')));
    commands().forEach((argv, i) => {
      const r = runs[i]!;
      expect(r.code, argv.join(' ')).toBe(1);
      expect(r.stderr, argv.join(' ')).toContain(DOWN);
    });
  });
});

describe('--json and --help on every command', () => {
  it('every command accepts --json and --help', async () => {
    const names = COMMANDS.map((c) => c.name);
    for (const required of [
      'balance',
      'faucet',
      'projects update',
      'projects delete',
      'apis show',
      'apis update',
      'apis delete',
      'endpoints show',
      'endpoints update',
      'endpoints delete',
      'rails update',
      'rails delete',
    ]) {
      expect(names).toContain(required);
    }
    for (const name of names) {
      const out: string[] = [];
      const code = await runCli([...name.split(' '), '--json', '--help'], {
        env: {},
        out: (t) => out.push(t),
        err: (t) => out.push(t),
      });
      expect(code, name).toBe(0);
      expect(out.join('\n')).toContain(`usage: tollgate ${name}`);
      expect(out.join('\n')).toContain('--json');
    }
  });

  it('prints JSON results from the commands that otherwise print text', async () => {
    const file = join(dir, 'json-key.json');
    const made = await json(['keygen', '--chain', 'solana', '--out', file, '--json']);
    expect(made).toMatchObject({ chain: 'solana', file });
    expect(await json(['address', '--chain', 'solana', '--key', file, '--json'])).toEqual({
      chain: 'solana',
      address: made.address,
    });
    const plain = await tollgate(['address', '--chain', 'solana', '--key', file]);
    expect(plain.stdout.trim()).toBe(made.address);
    expect(await json(['logout', '--gateway', DOWN, '--json'])).toEqual({
      gateway: DOWN,
      loggedOut: false,
    });
  });
});

describe('tollgate faucet and balance (sandbox)', () => {
  let sandbox: SandboxProcess;
  beforeAll(async () => {
    sandbox = await startSandboxProcess();
  }, 60_000);
  afterAll(async () => {
    await sandbox?.close();
  });

  it('funds a Solana key file, shows its USDC and SOL, and spends from it', async () => {
    const file = join(dir, 'payer.json');
    const { address } = await json(['keygen', '--chain', 'solana', '--out', file, '--json']);
    const gw = ['--gateway', sandbox.base];
    expect(await json(['faucet', '--chain', 'solana', '--key', file, '--amount', '2', ...gw])).toEqual({
      chain: 'solana',
      address,
      funded: '2',
      asset: 'USDC',
    });
    const before = await json(['balance', '--chain', 'solana', '--key', file, ...gw]);
    expect(before).toEqual({ chain: 'solana', address, usdc: '2', sol: '1' });

    const paid = await tollgate([
      'pay',
      '--chain',
      'solana',
      '--key',
      file,
      ...gw,
      '--json',
      `${sandbox.base}/p/demo/weather?city=Oslo`,
    ]);
    expect(paid.code, paid.stderr).toBe(0);
    const answer = JSON.parse(paid.stdout);
    expect(answer).toMatchObject({ status: 200, receipt: { success: true, payer: address } });
    expect(JSON.stringify(answer.body)).toContain('Oslo');

    const after = await json(['balance', '--chain', 'solana', '--key', file, ...gw]);
    expect(Number(after.usdc)).toBeLessThan(2);
    expect(Number(after.usdc)).toBeGreaterThan(1.9);
  });

  it('funds and reads a Sui address, the gateway from $TOLLGATE_GATEWAY', async () => {
    const address = Ed25519Keypair.generate().toSuiAddress();
    const env = { TOLLGATE_GATEWAY: sandbox.base };
    await json(['faucet', '--chain', 'sui', '--address', address, '--amount', '1.5'], env);
    expect(await json(['balance', '--chain', 'sui', '--address', address], env)).toEqual({
      chain: 'sui',
      address,
      usdc: '1.5',
      sui: '10',
    });
  });

  it('reads a balance from --rpc without any gateway, and zero for a new wallet', async () => {
    const info = (await (await fetch(`${sandbox.base}/sandbox/info`)).json()) as {
      solana: { rpcUrl: string };
    };
    const file = join(dir, 'empty.json');
    const { address } = await json(['keygen', '--chain', 'solana', '--out', file, '--json']);
    expect(
      await json([
        'balance',
        '--chain',
        'solana',
        '--key',
        file,
        '--rpc',
        info.solana.rpcUrl,
        '--gateway',
        DOWN,
      ]),
    ).toEqual({ chain: 'solana', address, usdc: '0', sol: '0' });
  });

  it('says when the gateway is not a sandbox', async () => {
    const r = await tollgate([
      'faucet',
      '--chain',
      'sui',
      '--address',
      Ed25519Keypair.generate().toSuiAddress(),
      '--gateway',
      h.baseUrl,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^tollgate: .*not a sandbox gateway/);
  });
});
