/**
 * `npm run reconcile` against the sandbox chains (issue 13): after real payments on both
 * chains (SPEC splits on each, a stock x402 v2 payment on Sui) the ledger and the chain
 * agree and the command exits 0; once a ledger row is altered (the gross column, a split's
 * recipient, the provider's payable) it exits non-zero and names that transaction; a
 * transaction the chain does not know is named too; an unreachable chain is "unchecked"
 * (exit 3), never a mismatch.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { getBase58Decoder } from '@solana/kit';
import { payFetch, suiExactV2PaymentSignature, suiWallet } from '@tollgate/client';
import { decodePaymentReceipt, decodePaymentRequired, decodeSettleResponse } from '@tollgate/protocol';
import { newSuiKey } from '@tollgate/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnvInput } from '../../src/config.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

const CLI = new URL('../../src/ops/cli.ts', import.meta.url).pathname;
/** Each run of the command is a fresh Node process (several seconds on a busy machine). */
const CLI_TEST_TIMEOUT_MS = 120_000;

let h: Harness;
let dir: string;
let db: DatabaseSync;
let env: EnvInput;
const startedAt = Date.now() - 1000;
/** Transactions paid in beforeAll. */
const txs = { solana: '', sui: '', suiV2: '' };

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

function reconcile(args: string[] = [], extraEnv: EnvInput = {}): Promise<CliRun> {
  const range = ['--from', new Date(startedAt).toISOString(), '--to', String(Date.now() + 60_000)];
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, 'reconcile', ...range, ...args],
      { env: { PATH: process.env['PATH'] ?? '', ...env, ...extraEnv } as NodeJS.ProcessEnv, timeout: 60_000 },
      (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** Changes one ledger value with plain SQL (as a bad migration or a hand edit would), returns the undo. */
function alter(table: 'redemptions' | 'payables', column: string, where: string, value: string): () => void {
  const before = db.prepare(`select ${column} as v from ${table} where ${where}`).get() as { v: string };
  expect(before).toBeDefined();
  db.prepare(`update ${table} set ${column} = ? where ${where}`).run(value);
  return () => void db.prepare(`update ${table} set ${column} = ? where ${where}`).run(before.v);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-reconcile-'));
  const databaseUrl = `sqlite:${join(dir, 'tollgate.db')}`;
  h = await startHarness({ databaseUrl });
  // Stock x402 v2 payers may pay this project: the platform gets it all, the provider a payable.
  await h.store.projects.update(h.project.id, { x402Exact: true });
  h.deps.catalog.invalidate();
  db = new DatabaseSync(join(dir, 'tollgate.db'));
  db.exec('PRAGMA busy_timeout = 5000');
  env = {
    TOLLGATE_NETWORK: 'sandbox',
    TOLLGATE_DATA_DIR: dir,
    DATABASE_URL: databaseUrl,
    SOLANA_RPC_URL: h.chains.solana.url,
    SUI_RPC_URL: h.chains.sui.url,
    LOG_LEVEL: 'silent',
  };

  const url = `${h.baseUrl}/p/${h.project.slug}/orders/new`;
  const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"sku":"a"}' };
  for (const chain of ['solana', 'sui'] as const) {
    const res = await payFetch(fetch, { wallets: [await h.newPayer(chain, '1')] })(url, post);
    expect(res.status).toBe(200);
    txs[chain] = decodePaymentReceipt(res.headers.get('x-payment-response')).txHashOrDigest;
  }

  const key = newSuiKey();
  h.chains.sui.faucet(key.address, 1_000_000n);
  const wallet = suiWallet({ secretKey: key.secretKey, rpcUrl: h.chains.sui.url });
  const items = `${h.baseUrl}/p/${h.project.slug}/items`;
  const required = decodePaymentRequired((await fetch(items)).headers.get('payment-required'));
  const entry = required.accepts.find((a) => a.network.startsWith('sui:'))!;
  const signed = await suiExactV2PaymentSignature(wallet, entry, { resource: required.resource });
  const res = await fetch(items, { headers: { 'payment-signature': signed.header } });
  expect(res.status).toBe(200);
  txs.suiV2 = decodeSettleResponse(res.headers.get('payment-response')).transaction;
  expect(txs.suiV2).toBe(signed.digest);
}, 120_000);

afterAll(async () => {
  db?.close();
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('npm run reconcile on the sandbox chains', () => {
  it(
    'passes after real payments on both chains, SPEC splits and v2 with its payable',
    async () => {
      const run = await reconcile();
      expect(run.stdout).toContain('solana: checked 1, ok 1, mismatches 0, unchecked 0');
      expect(run.stdout).toContain('sui: checked 2, ok 2, mismatches 0, unchecked 0');
      expect(run.stdout).toContain('ledger and chain agree');
      expect(run.code, run.stdout + run.stderr).toBe(0);

      const json = await reconcile(['--json', '--chain', 'sui']);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({
        ok: true,
        chains: { sui: { checked: 2, ok: 2, mismatches: 0 }, solana: { checked: 0 } },
        mismatches: [],
      });
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'fails naming the transaction once its gross column is altered, and passes again when it is put back',
    async () => {
      const undo = alter('redemptions', 'amount', `tx_id = '${txs.solana}'`, '22001');
      try {
        const run = await reconcile();
        expect(run.code).toBe(1);
        expect(run.stdout).toContain(`MISMATCH solana tx ${txs.solana}`);
        expect(run.stdout).toMatch(
          /ledger_gross_mismatch: gross column 0\.022001 USDC, the splits add up to 0\.022 USDC/,
        );
        expect(run.stdout).toContain('solana: checked 1, ok 0, mismatches 1');
        expect(run.stdout).toContain('sui: checked 2, ok 2, mismatches 0');
        expect(run.stderr).toContain(`mismatch in solana transaction ${txs.solana}`);
        expect(run.stdout).not.toContain(txs.sui);
      } finally {
        undo();
      }
      expect((await reconcile()).code).toBe(0);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "fails naming the transaction once a split's recipient is altered in the ledger",
    async () => {
      const row = db.prepare('select meta from redemptions where tx_id = ?').get(txs.sui) as { meta: string };
      const provider = h.recipients.sui.provider;
      const other = `0x${'ab'.repeat(32)}`;
      const undo = alter('redemptions', 'meta', `tx_id = '${txs.sui}'`, row.meta.replace(provider, other));
      try {
        const run = await reconcile(['--chain', 'sui']);
        expect(run.code).toBe(1);
        expect(run.stdout).toContain(`MISMATCH sui tx ${txs.sui}`);
        expect(run.stdout).toContain(`leg_missing: ${other} should receive 0.02 USDC, got nothing`);
        expect(run.stdout).toContain(`leg_extra: ${provider} received 0.02 USDC the ledger does not name`);
        expect(run.stdout).not.toContain(`MISMATCH sui tx ${txs.suiV2}`);
      } finally {
        undo();
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "fails naming the v2 transaction once the provider's payable is altered",
    async () => {
      const id = (db.prepare('select id from redemptions where tx_id = ?').get(txs.suiV2) as { id: string })
        .id;
      const undo = alter('payables', 'amount', `redemption_id = '${id}'`, '1');
      try {
        const run = await reconcile();
        expect(run.code).toBe(1);
        expect(run.stdout).toContain(`MISMATCH sui tx ${txs.suiV2}`);
        expect(run.stdout).toContain('payable_mismatch');
      } finally {
        undo();
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'exits 3 naming what it could not check when the chain cannot be reached, never calling it a mismatch',
    async () => {
      const run = await reconcile(['--chain', 'sui'], { SUI_RPC_URL: 'http://127.0.0.1:1' });
      expect(run.code).toBe(3);
      expect(run.stdout).toContain('sui: checked 2, ok 0, mismatches 0, unchecked 2');
      expect(run.stdout).toContain(`UNCHECKED sui tx ${txs.sui}`);
      expect(run.stdout).toContain(`UNCHECKED sui tx ${txs.suiV2}`);
      expect(run.stdout).not.toContain('MISMATCH');
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'names a transaction the chain does not know, and answers bad usage with 2',
    async () => {
      const unknown = getBase58Decoder().decode(randomBytes(64));
      await h.store.redemptions.claim({
        chain: 'solana',
        network: h.config.chainNetwork,
        txId: unknown,
        nonce: `n-${randomBytes(8).toString('hex')}`,
        requestHash: 'f'.repeat(64),
        requirementId: 'req',
        payer: h.recipients.solana.provider,
        projectId: h.project.id,
        endpointId: h.endpoints.items.id,
        amount: 11_000n,
        fee: 1_000n,
        meta: {
          subject: `ep:${h.endpoints.items.id}`,
          price: '10000',
          fee: '1000',
          splits: [
            { recipientType: 'provider', payTo: h.recipients.solana.provider, amount: '10000' },
            { recipientType: 'platform', payTo: h.recipients.solana.platform, amount: '1000' },
          ],
        },
        nowMs: Date.now(),
        leaseMs: 1000,
      });
      const run = await reconcile();
      expect(run.code).toBe(1);
      expect(run.stdout).toContain(`MISMATCH solana tx ${unknown}`);
      expect(run.stdout).toContain('tx_not_found: the chain does not know this transaction');
      expect(run.stdout).not.toContain(`MISMATCH solana tx ${txs.solana}`);
      // Out of scope of a Sui-only run.
      expect((await reconcile(['--chain', 'sui'])).code).toBe(0);

      const usage = await new Promise<CliRun>((done) =>
        execFile(
          process.execPath,
          [CLI, 'reconcile', '--to', 'yesterday'],
          { env: env as NodeJS.ProcessEnv },
          (err, stdout, stderr) =>
            done({ code: typeof err?.code === 'number' ? err.code : 0, stdout, stderr }),
        ),
      );
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('--from is required');
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
