/**
 * The refund protocol against the sandbox chains (issue 13): an undelivered payment's
 * payer gets the gross back exactly once from the platform wallet; a run that died at
 * any step is resolved by the next from the recorded transaction, never paying twice;
 * two runs at once pay once; a dry run moves nothing; a v2 payment is refunded only
 * if its transaction landed, and its provider's pending payable is cancelled.
 * (refund-e2e.test.ts drives the command against a real gateway and real payments.)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getBase58Decoder } from '@solana/kit';
import { newSolanaKey, newSuiKey, type PaymentWallet, solanaWallet, suiWallet } from '@tollgate/client';
import { USDC_SOLANA_MINT, USDC_SUI_COIN_TYPE } from '@tollgate/protocol';
import { Pool } from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Config, loadConfig } from '../../src/config.ts';
import { openChain } from '../../src/ops/payout-command.ts';
import { type RefundOptions, runRefund, SimulatedRefundCrash } from '../../src/ops/refund.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Chain, Store } from '../../src/store/store.ts';
import { type Chains, startChains } from '../support/gateway-harness.ts';
import { sandboxPlatformWallets } from '../support/platform-wallets.ts';

const LATER = 10 * 60_000;
const HOUR = 3_600_000;

let chains: Chains;
let dir: string;
let config: Readonly<Config>;
let store: Store;
let platform: { solana: string; sui: string };

const balance = (chain: Chain, owner: string) =>
  chain === 'solana' ? chains.solana.usdcBalance(owner) : chains.sui.usdcBalance(owner);
const newPayer = (chain: Chain) => (chain === 'solana' ? newSolanaKey() : newSuiKey());

/** A paid request whose upstream failed an hour ago: retryable, never delivered. */
async function undelivered(
  chain: Chain,
  payer: string,
  o: { amount?: bigint; v2?: boolean; txId?: string } = {},
): Promise<string> {
  const amount = o.amount ?? 22_000n;
  const fee = amount / 11n;
  const claim = await store.redemptions.claim({
    chain,
    network: 'localnet',
    // A well-formed id no transaction has: a signature (64 bytes) or a digest (32), base58.
    txId: o.txId ?? getBase58Decoder().decode(randomBytes(chain === 'solana' ? 64 : 32)),
    nonce: randomBytes(16).toString('hex'),
    requestHash: randomBytes(32).toString('hex'),
    requirementId: 'req',
    payer,
    meta: o.v2
      ? { x402Version: 2, splits: [{ recipientType: 'platform', payTo: 'P', amount: String(amount) }] }
      : {
          splits: [
            { recipientType: 'provider', payTo: 'Prov', amount: String(amount - fee) },
            { recipientType: 'platform', payTo: 'P', amount: String(fee) },
          ],
        },
    projectId: 'prj_test',
    endpointId: 'ep_test',
    amount,
    fee,
    nowMs: Date.now() - HOUR,
    leaseMs: 5_000,
  });
  if (claim.kind !== 'claimed') throw new Error(claim.kind);
  await store.redemptions.release(claim.redemption.id, claim.redemption.attempt, { failed: true });
  return claim.redemption.id;
}

const run = (target: RefundOptions['target'], extra: Partial<RefundOptions> = {}) =>
  runRefund({
    store,
    openChain: (chain) => openChain(config, chain),
    network: 'localnet',
    undeliveredAfterMs: 60_000,
    target,
    pollMs: 20,
    confirmTimeoutMs: 5_000,
    ...extra,
  });

beforeAll(async () => {
  chains = await startChains();
  dir = mkdtempSync(join(tmpdir(), 'tollgate-refund-'));
  platform = await sandboxPlatformWallets(dir, chains, 1_000_000_000n);
  config = loadConfig(
    {
      TOLLGATE_NETWORK: 'sandbox',
      TOLLGATE_DATA_DIR: dir,
      SOLANA_RPC_URL: chains.solana.url,
      SUI_RPC_URL: chains.sui.url,
      LOG_LEVEL: 'silent',
    },
    [],
  );
});

beforeEach(async () => {
  store = await openStore('sqlite::memory:');
});

afterEach(async () => {
  await store?.close();
});

afterAll(async () => {
  await chains?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('refund on the sandbox chains', () => {
  for (const chain of ['solana', 'sui'] as const) {
    for (const point of ['after_begin', 'after_record', 'after_send'] as const) {
      it(`${chain}: a run that died ${point.replace('_', ' ')} is resolved by the next, paying once`, async () => {
        const payer = newPayer(chain).address;
        const id = await undelivered(chain, payer, { amount: 33_000n });
        await expect(run({ id }, { crashAt: point })).rejects.toThrow(SimulatedRefundCrash);
        const left = (await store.refunds.byRedemption(id))!;
        expect(left.state).toBe(point === 'after_begin' ? 'open' : 'sent');
        expect((await store.refunds.candidate(id))?.refundState).toBe('refunding');
        expect(await balance(chain, payer)).toBe(point === 'after_send' ? 33_000n : 0n);

        // While the dead run's lease lasts, the refund is held.
        const busy = await run({ id });
        expect(busy.ok).toBe(false);
        expect(busy.errors.join()).toContain('held by another run');

        const next = await run({ id }, { now: () => Date.now() + LATER });
        expect(next.ok, next.errors.join('; ')).toBe(true);
        expect(next.lines).toMatchObject([
          { redemptionId: id, state: 'refunded', recovered: true, amount: 33_000n },
        ]);
        expect(await balance(chain, payer)).toBe(33_000n);
        const done = (await store.refunds.byRedemption(id))!;
        expect(done.state).toBe('refunded');
        // The recorded transaction itself paid: no second one was signed.
        if (point !== 'after_begin') expect(done.tx).toBe(left.tx);
        expect((await store.refunds.candidate(id))?.refundState).toBe('refunded');

        const again = await run({ all: true }, { now: () => Date.now() + LATER });
        expect(again).toMatchObject({ ok: true, lines: [], refunded: 0 });
        expect(await balance(chain, payer)).toBe(33_000n);
      });
    }
  }

  it('solana: a recorded transfer that expired unsent is given up and a new one pays, once', async () => {
    const payer = newPayer('solana').address;
    const id = await undelivered('solana', payer, { amount: 4_321n });
    await expect(run({ id }, { crashAt: 'after_record' })).rejects.toThrow(SimulatedRefundCrash);
    const left = (await store.refunds.byRedemption(id))!;
    // Past its last valid block height (each sandbox transaction is one block).
    const filler = newSolanaKey().address;
    for (let i = 0; i < 160; i++) await chains.solana.mintOther(filler, 1n);

    const next = await run({ id }, { now: () => Date.now() + LATER });
    expect(next.ok, next.errors.join('; ')).toBe(true);
    expect(next.lines).toMatchObject([{ state: 'refunded', recovered: true }]);
    const done = (await store.refunds.byRedemption(id))!;
    expect(done).toMatchObject({ state: 'refunded', error: null });
    expect(done.tx).not.toBe(left.tx);
    expect(await balance('solana', payer)).toBe(4_321n);
  });

  const PG = process.env['DATABASE_URL_TEST'];
  for (const backend of ['sqlite', ...(PG ? ['postgres'] : [])]) {
    it(`${backend}: pays once when two runs refund everything at once, and a dry run before moves nothing`, async () => {
      if (backend === 'sqlite') return twoRuns(store);
      // Two pools on one fresh schema, as two operator processes would have.
      const schema = `tg_refund_${randomBytes(6).toString('hex')}`;
      const admin = new Pool({ connectionString: PG, max: 1 });
      const mine = store;
      store = await openStore(PG!, { schema });
      const other = await openStore(PG!, { schema });
      try {
        await twoRuns(other);
      } finally {
        await other.close();
        await store.close();
        store = mine;
        await admin.query(`drop schema if exists "${schema}" cascade`);
        await admin.end();
      }
    });
  }

  async function twoRuns(second: Store) {
    const payers = [newPayer('solana').address, newPayer('sui').address, newPayer('solana').address];
    const ids = [
      await undelivered('solana', payers[0]!, { amount: 11_000n }),
      await undelivered('sui', payers[1]!, { amount: 123_456_789n }),
      await undelivered('solana', payers[2]!, { amount: 1n }),
    ];
    const plan = await run({ all: true }, { dryRun: true });
    expect(plan.ok, plan.errors.join('; ')).toBe(true);
    expect(plan.lines.map((l) => [l.redemptionId, l.state, l.amount])).toEqual([
      [ids[0], 'planned', 11_000n],
      [ids[1], 'planned', 123_456_789n],
      [ids[2], 'planned', 1n],
    ]);
    expect(await Promise.all(payers.map((p, i) => balance(i === 1 ? 'sui' : 'solana', p)))).toEqual([
      0n,
      0n,
      0n,
    ]);
    for (const id of ids) expect(await store.refunds.byRedemption(id)).toBeNull();

    const [a, b] = await Promise.all([run({ all: true }), run({ all: true }, { store: second })]);
    expect(
      [...a.errors, ...b.errors].every((e) => e.includes('held by another run')),
      [...a.errors, ...b.errors].join('; '),
    ).toBe(true);
    expect(a.refunded + b.refunded).toBe(3);
    expect(a.totalRefunded + b.totalRefunded).toBe(11_001n + 123_456_789n);
    expect(await Promise.all(payers.map((p, i) => balance(i === 1 ? 'sui' : 'solana', p)))).toEqual([
      11_000n,
      123_456_789n,
      1n,
    ]);
    // The v1 split: the provider had its share; the refund records what it owes back.
    expect((await store.refunds.byRedemption(ids[0]!))?.providerKept).toBe(10_000n);
  }

  it('refuses a payment still in its window or delivered, with exit-worthy errors for --id', async () => {
    const payer = newPayer('solana').address;
    const id = await undelivered('solana', payer);
    const early = await run({ id }, { undeliveredAfterMs: 2 * HOUR });
    expect(early.ok).toBe(false);
    expect(early.lines).toMatchObject([{ state: 'skipped', reason: 'in_window' }]);
    // --all leaves it alone without failing.
    expect(await run({ all: true }, { undeliveredAfterMs: 2 * HOUR })).toMatchObject({ ok: true, lines: [] });
    // A plan the platform wallet cannot pay says so.
    const big = await undelivered('solana', payer, { amount: 10n ** 12n });
    const plan = await run({ id: big }, { dryRun: true });
    expect(plan.ok).toBe(false);
    expect(plan.errors).toEqual([expect.stringContaining('the refund needs 1000000 USDC')]);
    expect((await run({ id: 'rdm_missing' })).errors).toEqual(['no payment rdm_missing']);
    expect(await balance('solana', payer)).toBe(0n);
  });

  it.each(['solana', 'sui'] as const)(
    '%s v2: refunds a payment that landed and cancels its pending payable; one that never landed is left alone',
    async (chain) => {
      let wallet: PaymentWallet;
      if (chain === 'solana') {
        const key = newSolanaKey();
        await chains.solana.faucet(key.address, 1_000_000n);
        wallet = solanaWallet({ secretKey: key.secretKey, rpcUrl: chains.solana.url });
      } else {
        const key = newSuiKey();
        chains.sui.faucet(key.address, 1_000_000n);
        wallet = suiWallet({ secretKey: key.secretKey, rpcUrl: chains.sui.url });
      }
      const key = { address: wallet.address };
      // The whole amount paid to the platform, as a stock x402 v2 payment is.
      const txId = await wallet.pay({
        chain,
        network: 'localnet',
        asset: 'USDC',
        totalAmount: '0.0101',
        decimals: 6,
        ...(chain === 'solana' ? { mint: USDC_SOLANA_MINT } : { coinType: USDC_SUI_COIN_TYPE }),
        splits: [{ recipientType: 'platform', payTo: platform[chain], amount: '0.0101' }],
        memo: 'v2 payment',
      });
      expect(await balance(chain, key.address)).toBe(1_000_000n - 10_100n);
      const charged = await undelivered(chain, key.address, { amount: 10_100n, v2: true, txId });
      const payable = await store.payables.record({
        redemptionId: charged,
        projectId: 'prj_test',
        chain,
        network: 'localnet',
        recipient: 'Prov',
        amount: 10_000n,
        nowMs: Date.now(),
      });
      const unpaid = await undelivered(chain, key.address, { amount: 10_100n, v2: true });

      const report = await run({ all: true, chain });
      expect(report.ok, report.errors.join('; ')).toBe(true);
      expect(report.lines.map((l) => [l.redemptionId, l.state])).toEqual([
        [charged, 'refunded'],
        [unpaid, 'not_charged'],
      ]);
      expect(report.lines[0]).toMatchObject({ providerKept: 0n, payableId: payable.id, amount: 10_100n });
      expect(await balance(chain, key.address)).toBe(1_000_000n);
      expect((await store.payables.byRedemption(charged))?.state).toBe('cancelled');
      // Never charged: not marked, the payer may still use it.
      expect((await store.refunds.candidate(unpaid))?.refundState).toBeNull();
    },
  );
});
