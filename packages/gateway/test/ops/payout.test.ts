/**
 * The operator payout against the sandbox chains (issue 11): what the payables say is
 * owed arrives exactly, once, in batched transfers from the platform wallet; a dry run
 * moves nothing; a run interrupted at any step is resolved by the next from the
 * recorded transaction, never paying twice; two runs at once pay once.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SuiGrpcClient } from '@mysten/sui/grpc';
import { Transaction } from '@mysten/sui/transactions';
import { newSolanaKey, newSuiKey, saveSolanaKeyFile } from '@tollgate/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config, type EnvInput, loadConfig } from '../../src/config.ts';
import { runPayout, SimulatedCrash } from '../../src/ops/payout.ts';
import type { PayoutChain } from '../../src/ops/payout-chain.ts';
import { solanaPayoutChain } from '../../src/ops/payout-solana.ts';
import { suiPayoutChain } from '../../src/ops/payout-sui.ts';
import { loadPlatformKey, type SuiPlatformKey } from '../../src/ops/platform-keys.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Chain, Store } from '../../src/store/store.ts';
import { type Chains, startChains } from '../support/gateway-harness.ts';
import { sandboxPlatformWallets } from '../support/platform-wallets.ts';

const CLI = new URL('../../src/ops/cli.ts', import.meta.url).pathname;
const LATER = 10 * 60_000;

let chains: Chains;
let dir: string;
let env: EnvInput;
let config: Readonly<Config>;
let store: Store;
let platform: { solana: string; sui: string };

function payoutChain(chain: Chain, key: Awaited<ReturnType<typeof loadPlatformKey>>): PayoutChain {
  return chain === 'solana'
    ? solanaPayoutChain({ key: key as never, rpcUrl: chains.solana.url, commitment: 'confirmed' })
    : suiPayoutChain({ key: key as SuiPlatformKey, rpcUrl: chains.sui.url, network: 'localnet' });
}

async function chainOf(chain: Chain): Promise<PayoutChain> {
  return payoutChain(chain, await loadPlatformKey(config, chain));
}

const balance = (chain: Chain, owner: string) =>
  chain === 'solana' ? chains.solana.usdcBalance(owner) : chains.sui.usdcBalance(owner);

const newRecipient = (chain: Chain) => (chain === 'solana' ? newSolanaKey().address : newSuiKey().address);

/** Creation times that strictly increase, so "oldest debt first" is well defined. */
let clock = Date.now();

/** Records payables (one per amount) for a recipient; returns their redemption ids. */
async function owe(
  chain: Chain,
  recipient: string,
  amounts: bigint[],
  network = 'localnet',
): Promise<string[]> {
  const ids: string[] = [];
  for (const amount of amounts) {
    const redemptionId = `rdm_${randomBytes(8).toString('hex')}`;
    await store.payables.record({
      redemptionId,
      projectId: 'prj_test',
      chain,
      network,
      recipient,
      amount,
      nowMs: ++clock,
    });
    ids.push(redemptionId);
  }
  return ids;
}

async function balances(chain: Chain, owners: string[]): Promise<bigint[]> {
  return Promise.all(owners.map((o) => balance(chain, o)));
}

const run = (chain: PayoutChain, extra: Partial<Parameters<typeof runPayout>[0]> = {}) =>
  runPayout({ store, chain, network: 'localnet', pollMs: 20, confirmTimeoutMs: 5_000, ...extra });

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], extraEnv: EnvInput = {}): Promise<CliRun> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, 'payout', ...args],
      { env: { PATH: process.env['PATH'] ?? '', ...env, ...extraEnv } as NodeJS.ProcessEnv, timeout: 30_000 },
      (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** Every payable of these redemptions: state and transaction. */
async function rows(ids: string[]) {
  return Promise.all(ids.map(async (id) => (await store.payables.byRedemption(id))!));
}

beforeAll(async () => {
  chains = await startChains();
  dir = mkdtempSync(join(tmpdir(), 'tollgate-payout-'));
  // Sandbox mode's own wallets, where `npm start` would have created them; 1000 USDC and 1 SOL.
  platform = await sandboxPlatformWallets(dir, chains, 1_000_000_000n);
  env = {
    TOLLGATE_NETWORK: 'sandbox',
    TOLLGATE_DATA_DIR: dir,
    DATABASE_URL: `sqlite:${join(dir, 'tollgate.db')}`,
    SOLANA_RPC_URL: chains.solana.url,
    SUI_RPC_URL: chains.sui.url,
    LOG_LEVEL: 'silent',
  };
  config = loadConfig(env, []);
  store = await openStore(config.databaseUrl);
});

afterAll(async () => {
  await store?.close();
  await chains?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('payout on the sandbox chains', () => {
  it('pays 3 Solana recipients their exact totals in one transaction, then nothing the second time', async () => {
    const r = [newRecipient('solana'), newRecipient('solana'), newRecipient('solana')];
    const owed = [[10_000n, 2_500n], [7n], [1_000_000n, 1n, 999_999n]];
    const ids = (await Promise.all(r.map((to, i) => owe('solana', to, owed[i]!)))).flat();
    // Not this gateway's network: never paid by it.
    const [other] = await owe('solana', r[0]!, [5n], 'mainnet');
    const before = await balances('solana', [...r, platform.solana]);

    const report = await run(await chainOf('solana'));
    expect(report.ok).toBe(true);
    expect(report.errors).toEqual([]);
    expect(report.transactions).toHaveLength(1);
    const tx = report.transactions[0]!;
    const sums = owed.map((a) => a.reduce((s, x) => s + x, 0n));
    expect(report.lines.map((l) => [l.recipient, l.amount, l.count, l.tx, l.state]).sort()).toEqual(
      r.map((to, i) => [to, sums[i], owed[i]!.length, tx, 'paid']).sort(),
    );
    expect(report.totalPaid).toBe(sums[0]! + sums[1]! + sums[2]!);

    const after = await balances('solana', [...r, platform.solana]);
    expect(after.map((b, i) => b - before[i]!)).toEqual([...sums, -report.totalPaid]);
    for (const p of await rows(ids)) {
      expect(p).toMatchObject({ state: 'paid', payoutTx: tx });
      expect(p.paidAtMs).toBeGreaterThan(0);
      expect(p.payoutId).toMatch(/^pout_/);
    }
    expect((await rows([other!]))[0]!.state).toBe('pending');

    const again = await run(await chainOf('solana'));
    expect(again).toMatchObject({ ok: true, lines: [], transactions: [], totalPaid: 0n });
    expect(await balances('solana', [...r, platform.solana])).toEqual(after);

    // Through the CLI as well: nothing due, exit 0.
    const cliAgain = await cli(['--chain', 'solana']);
    expect(cliAgain.stdout).toContain('nothing to pay');
    expect(cliAgain.code).toBe(0);
    expect(await balances('solana', [...r, platform.solana])).toEqual(after);
  });

  it('pays 2 Sui recipients through the CLI entry, in one PTB, and a second run pays nothing', async () => {
    const r = [newRecipient('sui'), newRecipient('sui')];
    const ids = [...(await owe('sui', r[0]!, [123_456n, 1n])), ...(await owe('sui', r[1]!, [42n]))];
    const before = await balances('sui', [...r, platform.sui]);

    const first = await cli(['--chain', 'sui', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const report = JSON.parse(first.stdout);
    expect(report).toMatchObject({ ok: true, chain: 'sui', network: 'localnet', platform: platform.sui });
    expect(report.transactions).toHaveLength(1);
    const tx = report.transactions[0];
    expect(
      report.lines
        .map((l: { recipient: string; amountAtomic: string }) => [l.recipient, l.amountAtomic])
        .sort(),
    ).toEqual(
      [
        [r[0], '123457'],
        [r[1], '42'],
      ].sort(),
    );
    expect(report.totalPaid).toBe('0.123499');

    const after = await balances('sui', [...r, platform.sui]);
    expect(after.map((b, i) => b - before[i]!)).toEqual([123_457n, 42n, -123_499n]);
    for (const p of await rows(ids)) expect(p).toMatchObject({ state: 'paid', payoutTx: tx });

    const second = await cli(['--chain', 'sui']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('nothing to pay');
    expect(await balances('sui', [...r, platform.sui])).toEqual(after);
  });

  it('moves nothing on a dry run, and prints the plan', async () => {
    const sol = [newRecipient('solana'), newRecipient('solana')];
    const sui = [newRecipient('sui')];
    const ids = [
      ...(await owe('solana', sol[0]!, [11n])),
      ...(await owe('solana', sol[1]!, [22n, 3n])),
      ...(await owe('sui', sui[0]!, [44n])),
    ];
    const before = [
      await balances('solana', [...sol, platform.solana]),
      await balances('sui', [...sui, platform.sui]),
    ];

    const report = await run(await chainOf('solana'), { dryRun: true });
    expect(report).toMatchObject({ ok: true, dryRun: true, transactions: [], totalPaid: 0n });
    expect(report.lines.map((l) => [l.recipient, l.amount, l.state]).sort()).toEqual(
      [
        [sol[0], 11n, 'planned'],
        [sol[1], 25n, 'planned'],
      ].sort(),
    );
    const printed = await cli(['--chain', 'sui', '--dry-run']);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toContain('dry run');
    expect(printed.stdout).toContain(sui[0]);
    expect(printed.stdout).toContain('0.000044');

    expect([
      await balances('solana', [...sol, platform.solana]),
      await balances('sui', [...sui, platform.sui]),
    ]).toEqual(before);
    for (const p of await rows(ids)) expect(p.state).toBe('pending');
    expect(await store.payables.unfinishedPayout('solana', 'localnet')).toBeNull();

    // Leave nothing due for the next tests.
    expect((await run(await chainOf('solana'))).ok).toBe(true);
    expect((await run(await chainOf('sui'))).ok).toBe(true);
  });

  it('splits many recipients into several transactions and honours --max-recipients', async () => {
    const r = Array.from({ length: 11 }, () => newRecipient('solana'));
    for (const [i, to] of r.entries()) await owe('solana', to, [BigInt(100 + i)]);
    const before = await balances('solana', r);

    const capped = await run(await chainOf('solana'), { maxRecipients: 3 });
    expect(capped.ok).toBe(true);
    // Oldest debt first.
    expect(capped.lines.map((l) => l.recipient).sort()).toEqual(r.slice(0, 3).sort());
    const mid = await balances('solana', r);
    expect(mid.map((b, i) => b - before[i]!)).toEqual(r.map((_, i) => (i < 3 ? BigInt(100 + i) : 0n)));

    const rest = await run(await chainOf('solana'));
    expect(rest.ok).toBe(true);
    expect(rest.transactions).toHaveLength(1); // 8 fit one Solana transaction
    expect(rest.lines).toHaveLength(8);
    const all = await balances('solana', r);
    expect(all.map((b, i) => b - before[i]!)).toEqual(r.map((_, i) => BigInt(100 + i)));

    const more = Array.from({ length: 10 }, () => newRecipient('solana'));
    for (const to of more) await owe('solana', to, [1n]);
    const two = await run(await chainOf('solana'));
    expect(two.transactions).toHaveLength(2);
    expect(await balances('solana', more)).toEqual(more.map(() => 1n));
  });

  for (const chain of ['solana', 'sui'] as const) {
    for (const point of ['after_assign', 'after_record', 'after_send'] as const) {
      it(`${chain}: a run that died ${point.replace('_', ' ')} is resolved by the next, paying once`, async () => {
        const r = [newRecipient(chain), newRecipient(chain)];
        const ids = [...(await owe(chain, r[0]!, [5_000n, 5n])), ...(await owe(chain, r[1]!, [77n]))];
        const before = await balances(chain, r);
        await expect(run(await chainOf(chain), { crashAt: point })).rejects.toThrow(SimulatedCrash);
        const left = await store.payables.unfinishedPayout(chain, 'localnet');
        expect(left?.state).toBe(point === 'after_assign' ? 'open' : 'sent');
        if (point === 'after_send') {
          // The money moved; the ledger does not know yet.
          expect((await balances(chain, r)).map((b, i) => b - before[i]!)).toEqual([5_005n, 77n]);
        }

        // While the dead run's lease lasts, the lock is held.
        const busy = await run(await chainOf(chain));
        expect(busy.busy?.payoutId).toBe(left!.id);
        expect(busy.ok).toBe(false);

        const next = await run(await chainOf(chain), { now: () => Date.now() + LATER });
        expect(next.ok, next.errors.join('; ')).toBe(true);
        expect((await balances(chain, r)).map((b, i) => b - before[i]!)).toEqual([5_005n, 77n]);
        const paid = await rows(ids);
        expect(new Set(paid.map((p) => p.state))).toEqual(new Set(['paid']));
        if (point !== 'after_assign') {
          // The recorded transaction itself paid: no second one was signed for these rows.
          expect(new Set(paid.map((p) => p.payoutTx))).toEqual(new Set([left!.tx]));
          expect(next.lines.every((l) => l.recovered)).toBe(true);
        }
        expect(await store.payables.unfinishedPayout(chain, 'localnet')).toBeNull();
        const after = await balances(chain, r);
        expect((await run(await chainOf(chain), { now: () => Date.now() + LATER })).lines).toEqual([]);
        expect(await balances(chain, r)).toEqual(after);
      });
    }
  }

  it('solana: a recorded transaction that expired unsent is given up and the rows paid afresh', async () => {
    const to = newRecipient('solana');
    const ids = await owe('solana', to, [321n]);
    await expect(run(await chainOf('solana'), { crashAt: 'after_record' })).rejects.toThrow(SimulatedCrash);
    const left = (await store.payables.unfinishedPayout('solana', 'localnet'))!;
    // Past its last valid block height (each sandbox transaction is one block).
    const filler = newSolanaKey().address;
    for (let i = 0; i < 160; i++) await chains.solana.mintOther(filler, 1n);

    const next = await run(await chainOf('solana'), { now: () => Date.now() + LATER });
    expect(next.ok, next.errors.join('; ')).toBe(true);
    expect(next.lines.find((l) => l.recovered)).toMatchObject({ state: 'failed', tx: left.tx });
    expect(next.lines.find((l) => !l.recovered)).toMatchObject({
      state: 'paid',
      recipient: to,
      amount: 321n,
    });
    expect(await balance('solana', to)).toBe(321n);
    const [row] = await rows(ids);
    expect(row!.payoutTx).not.toBe(left.tx);
    expect(await store.payables.payout(left.id)).toMatchObject({ state: 'failed' });
  });

  it('sui: a recorded transaction whose gas coin was spent elsewhere is given up and the rows paid afresh', async () => {
    const to = newRecipient('sui');
    await owe('sui', to, [654n]);
    await expect(run(await chainOf('sui'), { crashAt: 'after_record' })).rejects.toThrow(SimulatedCrash);
    const left = (await store.payables.unfinishedPayout('sui', 'localnet'))!;
    // The platform spends its gas coin in another transaction: the recorded one can never run.
    const key = (await loadPlatformKey(config, 'sui')) as SuiPlatformKey;
    const client = new SuiGrpcClient({ network: 'localnet', baseUrl: chains.sui.url });
    const tx = new Transaction();
    tx.setSender(platform.sui);
    // Sending the gas coin to itself is enough to move it to a new version.
    tx.transferObjects([tx.gas], platform.sui);
    const done = await client.signAndExecuteTransaction({ signer: key.keypair, transaction: tx });
    expect(done.$kind).toBe('Transaction');

    const next = await run(await chainOf('sui'), { now: () => Date.now() + LATER });
    expect(next.ok, next.errors.join('; ')).toBe(true);
    expect(next.lines.find((l) => l.recovered)).toMatchObject({ state: 'failed', tx: left.tx });
    expect(await balance('sui', to)).toBe(654n);
  });

  it('pays once when two runs start together', async () => {
    const r = [newRecipient('solana'), newRecipient('solana'), newRecipient('solana')];
    for (const to of r) await owe('solana', to, [1_000n]);
    const [a, b] = await Promise.all([run(await chainOf('solana')), run(await chainOf('solana'))]);
    expect([a.busy, b.busy].filter((x) => x !== null).length).toBeLessThanOrEqual(1);
    expect(a.totalPaid + b.totalPaid).toBe(3_000n);
    expect(await balances('solana', r)).toEqual([1_000n, 1_000n, 1_000n]);
  });

  it('refuses a key that is not the platform wallet, and bad usage, with exit 2', async () => {
    const stranger = join(dir, 'stranger.json');
    saveSolanaKeyFile(stranger, newSolanaKey());
    const wrong = await cli(['--chain', 'solana'], { PLATFORM_SOLANA_KEY: stranger });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('refusing to pay out from another wallet');
    expect((await cli(['--chain', 'bitcoin'])).code).toBe(2);
    expect((await cli(['--chain', 'solana', '--max-recipients', '0'])).code).toBe(2);
    const noRpc = await cli(['--chain', 'sui'], { SUI_RPC_URL: '' });
    expect(noRpc.stderr).toContain('SUI_RPC_URL is not set');
  });
});
