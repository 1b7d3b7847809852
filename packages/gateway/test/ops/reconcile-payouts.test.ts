/**
 * `npm run reconcile` checks payouts too (docs/operations-reconcile.md): after real
 * payouts on both sandbox chains each recipient got exactly its payables and the platform
 * signed; a payable altered afterwards, or a payout marked failed whose transaction
 * landed, fails the run naming the payout's transaction.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { newSolanaKey, newSuiKey } from '@tollgate/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EnvInput, loadConfig } from '../../src/config.ts';
import { runPayout } from '../../src/ops/payout.ts';
import { solanaPayoutChain } from '../../src/ops/payout-solana.ts';
import { suiPayoutChain } from '../../src/ops/payout-sui.ts';
import { loadPlatformKey, type SolanaPlatformKey, type SuiPlatformKey } from '../../src/ops/platform-keys.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Chain, Store } from '../../src/store/store.ts';
import { type Chains, startChains } from '../support/gateway-harness.ts';
import { sandboxPlatformWallets } from '../support/platform-wallets.ts';

const CLI = new URL('../../src/ops/cli.ts', import.meta.url).pathname;
/** Each run of the command is a fresh Node process (several seconds on a busy machine). */
const CLI_TEST_TIMEOUT_MS = 120_000;
const startedAt = Date.now() - 1000;

let chains: Chains;
let dir: string;
let env: EnvInput;
let store: Store;
let db: DatabaseSync;
const tx: Record<Chain, string> = { solana: '', sui: '' };

function reconcile(): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(
      process.execPath,
      [CLI, 'reconcile', '--from', String(startedAt), '--to', String(Date.now() + 60_000)],
      { env: { PATH: process.env['PATH'] ?? '', ...env } as NodeJS.ProcessEnv, timeout: 60_000 },
      (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    ),
  );
}

async function owe(chain: Chain, recipient: string, amount: bigint) {
  await store.payables.record({
    redemptionId: `rdm_${randomBytes(8).toString('hex')}`,
    projectId: 'prj_test',
    chain,
    network: 'localnet',
    recipient,
    amount,
    nowMs: Date.now(),
  });
}

beforeAll(async () => {
  chains = await startChains();
  dir = mkdtempSync(join(tmpdir(), 'tollgate-reconcile-payouts-'));
  const platform = await sandboxPlatformWallets(dir, chains, 1_000_000_000n);
  env = {
    TOLLGATE_NETWORK: 'sandbox',
    TOLLGATE_DATA_DIR: dir,
    DATABASE_URL: `sqlite:${join(dir, 'tollgate.db')}`,
    SOLANA_RPC_URL: chains.solana.url,
    SUI_RPC_URL: chains.sui.url,
    PLATFORM_SOLANA_ADDRESS: platform.solana,
    PLATFORM_SUI_ADDRESS: platform.sui,
    LOG_LEVEL: 'silent',
  };
  const config = loadConfig(env, []);
  store = await openStore(config.databaseUrl);
  db = new DatabaseSync(join(dir, 'tollgate.db'));
  db.exec('PRAGMA busy_timeout = 5000');

  await owe('solana', newSolanaKey().address, 12_345n);
  await owe('solana', newSolanaKey().address, 7n);
  await owe('sui', newSuiKey().address, 40_000n);
  const solana = solanaPayoutChain({
    key: (await loadPlatformKey(config, 'solana')) as SolanaPlatformKey,
    rpcUrl: chains.solana.url,
    commitment: 'confirmed',
  });
  const sui = suiPayoutChain({
    key: (await loadPlatformKey(config, 'sui')) as SuiPlatformKey,
    rpcUrl: chains.sui.url,
    network: 'localnet',
  });
  for (const [chain, payoutChain] of [
    ['solana', solana],
    ['sui', sui],
  ] as const) {
    const report = await runPayout({ store, chain: payoutChain, network: 'localnet', pollMs: 20 });
    expect(report.ok, report.errors.join('; ')).toBe(true);
    tx[chain] = report.transactions[0]!;
  }
}, 120_000);

afterAll(async () => {
  db?.close();
  await store?.close();
  await chains?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('reconciling payouts on the sandbox chains', () => {
  it(
    'passes after real payouts on both chains',
    async () => {
      const run = await reconcile();
      expect(run.stdout).toContain('solana: checked 1, ok 1, mismatches 0, unchecked 0');
      expect(run.stdout).toContain('sui: checked 1, ok 1, mismatches 0, unchecked 0');
      expect(run.code, run.stdout + run.stderr).toBe(0);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'fails naming the payout transaction once one of its payables is altered',
    async () => {
      const change = db.prepare("update payables set amount = ? where chain = 'solana' and amount = ?");
      change.run('12346', '12345');
      try {
        const run = await reconcile();
        expect(run.code).toBe(1);
        expect(run.stdout).toMatch(new RegExp(`MISMATCH solana tx ${tx.solana} \\(payout pout_`));
        expect(run.stdout).toContain('leg_amount_mismatch');
        expect(run.stderr).toContain(tx.solana);
      } finally {
        change.run('12345', '12346');
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'fails naming the transaction of a payout marked failed that moved money',
    async () => {
      db.prepare("update payouts set state = 'failed' where tx = ?").run(tx.sui);
      try {
        const run = await reconcile();
        expect(run.code).toBe(1);
        expect(run.stdout).toContain(`MISMATCH sui tx ${tx.sui}`);
        expect(run.stdout).toContain('payout_failed_but_landed');
      } finally {
        db.prepare("update payouts set state = 'paid' where tx = ?").run(tx.sui);
      }
      expect((await reconcile()).code).toBe(0);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
