/**
 * @tollgate/client as a stranger gets it: `npm pack` of @tollgate/protocol and
 * @tollgate/client (each built to JavaScript + .d.ts by its prepack), both tarballs
 * installed into an empty project outside the repository, and a plain .mjs script there
 * that makes a Solana wallet, funds it from the sandbox faucet and pays the demo
 * endpoint of a real sandbox gateway with payFetch. The installed `tollgate` bin runs,
 * and a TypeScript consumer type-checks against the declarations.
 *
 * The packing runs on a copy of the two packages (their sources, manifests and build
 * setup, with the repository's node_modules linked in), so the working tree is never
 * rewritten by prepack while others use it. The install needs the npm registry for the
 * packages' own dependencies: without it the test is skipped, saying so.
 */
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, type SandboxProcess, startSandboxProcess } from '../support/sandbox-process.ts';

const run = promisify(execFile);
const NPM_ENV = {
  ...process.env,
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

async function registryReachable(): Promise<string | null> {
  try {
    const { stdout } = await run('npm', ['config', 'get', 'registry'], { env: NPM_ENV, timeout: 10_000 });
    const registry = stdout.trim().replace(/\/?$/, '/');
    const res = await fetch(`${registry}zod`, {
      method: 'HEAD',
      signal: AbortSignal.timeout(5000),
    });
    return res.ok ? null : `the npm registry ${registry} answered ${res.status}`;
  } catch (e) {
    return `the npm registry is unreachable (${(e as Error).message})`;
  }
}

const offline = await registryReachable();
if (offline) console.warn(`packed-client.e2e: SKIPPED — ${offline}; the tarballs cannot be installed`);

let work: string;
let consumer: string;
let sandbox: SandboxProcess | undefined;

/** Copies a package's own files (no node_modules, dist, tarballs) into the staging tree. */
function stagePackage(name: string, stage: string): string {
  const from = join(ROOT, 'packages', name);
  const to = join(stage, 'packages', name);
  cpSync(from, to, {
    recursive: true,
    filter: (src) => !/[/\\](node_modules|dist)([/\\]|$)|\.tgz$/.test(src.slice(from.length)),
  });
  return to;
}

/** `npm pack` in `dir` (its prepack builds it); the tarball's path and the files in it. */
async function npmPack(dir: string, dest: string): Promise<{ file: string; files: string[] }> {
  const { stdout } = await run('npm', ['pack', '--pack-destination', dest, '--json'], {
    cwd: dir,
    env: NPM_ENV,
    timeout: 60_000,
  });
  const [info] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  return { file: join(dest, info!.filename), files: info!.files.map((f) => f.path) };
}

let tarballs: { protocol: string; client: string; clientFiles: string[] };

describe.skipIf(offline !== null)('the packed @tollgate/client', () => {
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'tollgate-packed-'));
    const stage = join(work, 'stage');
    mkdirSync(join(stage, 'packages'), { recursive: true });
    cpSync(join(ROOT, 'tsconfig.json'), join(stage, 'tsconfig.json'));
    if (existsSync(join(ROOT, 'scripts')))
      cpSync(join(ROOT, 'scripts'), join(stage, 'scripts'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(stage, 'node_modules'), 'dir');
    const protocolDir = stagePackage('protocol', stage);
    const clientDir = stagePackage('client', stage);
    const dest = join(work, 'tarballs');
    mkdirSync(dest);

    const starting = startSandboxProcess();
    starting.catch(() => {}); // awaited below; keep an early failure from going unhandled
    const protocol = await npmPack(protocolDir, dest);
    const client = await npmPack(clientDir, dest);
    tarballs = { protocol: protocol.file, client: client.file, clientFiles: client.files };

    // An empty project outside the repository, as a payer starts one.
    consumer = join(work, 'consumer');
    mkdirSync(consumer);
    writeFileSync(
      join(consumer, 'package.json'),
      JSON.stringify({ name: 'payer', version: '1.0.0', private: true, type: 'module' }),
    );
    await run(
      'npm',
      ['install', '--prefer-offline', '--no-package-lock', tarballs.protocol, tarballs.client],
      {
        cwd: consumer,
        env: NPM_ENV,
        timeout: 90_000,
      },
    );
    sandbox = await starting;
  }, 150_000);

  afterAll(async () => {
    await sandbox?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('ships JavaScript and declarations, not TypeScript sources', () => {
    const files = tarballs.clientFiles;
    expect(files).toContain('package.json');
    expect(files).toContain('README.md');
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('dist/sign-in.js');
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files.filter((f) => f.includes('.test.'))).toEqual([]);
    const installed = readdirSync(join(consumer, 'node_modules', '@tollgate'));
    expect(installed.sort()).toEqual(['client', 'protocol']);
  });

  it('pays the sandbox from a plain .mjs script', async () => {
    const script = join(consumer, 'pay.mjs');
    writeFileSync(
      script,
      `import { newSolanaKey, payFetch, solanaWallet, signIn } from '@tollgate/client';
import { decodePaymentReceipt } from '@tollgate/protocol';
const base = process.env.TOLLGATE_URL;
const info = await (await fetch(base + '/sandbox/info')).json();
const key = newSolanaKey();
const funded = await fetch(base + '/sandbox/faucet', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ chain: 'solana', address: key.address, amount: '1' }),
});
if (!funded.ok) throw new Error('faucet: ' + (await funded.text()));
const wallet = solanaWallet({ secretKey: key.secretKey, rpcUrl: info.solana.rpcUrl });
const pay = payFetch(fetch, { wallets: [wallet], maxPerRequest: '0.05' });
const res = await pay(base + '/p/demo/weather?city=Oslo');
const receipt = decodePaymentReceipt(res.headers.get('x-payment-response'));
const session = await signIn(base, wallet);
console.log(JSON.stringify({ status: res.status, body: await res.json(), receipt, spent: String(pay.spent), payer: key.address, owner: session.owner }));
`,
    );
    const { stdout } = await run(process.execPath, [script], {
      cwd: consumer,
      env: { ...process.env, TOLLGATE_URL: sandbox!.base },
      timeout: 30_000,
    });
    const out = JSON.parse(stdout);
    expect(out.status).toBe(200);
    expect(JSON.stringify(out.body)).toContain('Oslo');
    expect(out.receipt).toMatchObject({ success: true, chain: 'solana', payer: out.payer });
    expect(BigInt(out.spent)).toBeGreaterThan(0n);
    expect(out.owner).toEqual({ chain: 'solana', address: out.payer });
  });

  it('installs a working `tollgate` bin', async () => {
    const bin = join(consumer, 'node_modules', '.bin', 'tollgate');
    const help = await run(bin, ['--help'], { cwd: consumer, timeout: 20_000 });
    expect(help.stdout).toContain('usage: tollgate <command>');
    const keyFile = join(consumer, 'fresh.json');
    const made = await run(bin, ['keygen', '--chain', 'solana', '--out', keyFile, '--json'], {
      cwd: consumer,
      timeout: 20_000,
    });
    const { address: fresh } = JSON.parse(made.stdout) as { address: string };
    expect(fresh).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    const funded = await run(
      bin,
      ['faucet', '--chain', 'solana', '--key', keyFile, '--amount', '0.5', '--gateway', sandbox!.base],
      { cwd: consumer, timeout: 20_000 },
    );
    expect(JSON.parse(funded.stdout)).toMatchObject({ address: fresh, funded: '0.5' });
    const balance = await run(
      bin,
      ['balance', '--chain', 'solana', '--key', keyFile, '--gateway', sandbox!.base],
      {
        cwd: consumer,
        timeout: 20_000,
      },
    );
    expect(JSON.parse(balance.stdout)).toMatchObject({ address: fresh, usdc: '0.5' });
  });

  it('type-checks a TypeScript consumer against the declarations', async () => {
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
          lib: ['es2022', 'dom'],
        },
        files: ['check.ts'],
      }),
    );
    writeFileSync(
      join(consumer, 'check.ts'),
      `import { type PayFetch, payFetch, type PaymentWallet, signIn, solanaWallet, UndeliveredPaymentError } from '@tollgate/client';
import type { AcceptOption } from '@tollgate/protocol';
const wallet: PaymentWallet = solanaWallet({ secretKey: new Uint8Array(64), rpcUrl: 'http://127.0.0.1:1' });
const pay: PayFetch = payFetch(fetch, { wallets: [wallet], maxPerRequest: '0.05' });
const spent: bigint = pay.spent;
// @ts-expect-error the address is a string: proves the declarations are read, not any
const wrong: number = wallet.address;
export async function f(option: AcceptOption): Promise<string> {
  const { accessToken } = await signIn('https://gateway.example', solanaWallet({ secretKey: new Uint8Array(64), rpcUrl: '' }));
  return option.totalAmount + accessToken + String(spent) + String(wrong) + String(new UndeliveredPaymentError('m', { url: '', method: 'GET', headers: {}, body: null, proof: '' }, {}).proof);
}
`,
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', join(consumer, 'tsconfig.json')], {
      cwd: consumer,
      timeout: 60_000,
    }).catch((e: { stdout?: string; stderr?: string }) => e);
    expect(`${result.stdout ?? ''}${result.stderr ?? ''}`).toBe('');
  });
});

if (offline) {
  describe('the packed @tollgate/client', () => {
    it.skip(`skipped: ${offline}`, () => {});
  });
}
