/**
 * Refunding a stock x402 v2 payment end to end (issue 13): for a project paid whole to
 * the platform (x402Exact), a real gateway sends the payer's payment on-chain once the
 * upstream's answer starts, then the upstream stalls mid-body: paid, charged, never
 * delivered, and the provider's share is a pending payable. The refund command pays
 * the payer back the gross and cancels that payable in the same step; the same
 * PAYMENT-SIGNATURE is refused afterwards without reaching the upstream.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { newSolanaKey, newSuiKey, saveSolanaKeyFile, saveSuiKeyFile } from '@tollgate/client';
import { SOLANA_DEVNET_GENESIS_HASH, solanaCaip2 } from '@tollgate/protocol';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { toClientSvmSigner } from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnvInput } from '../../src/config.ts';
import { refundCommand } from '../../src/ops/refund-command.ts';
import { type Chains, type Harness, startChains, startHarness } from '../support/gateway-harness.ts';

const SANDBOX_CAIP2 = solanaCaip2(SOLANA_DEVNET_GENESIS_HASH) as `${string}:${string}`;
const GROSS = 11_000n; // items: 0.01 USDC + the harness's 10 % fee

let chains: Chains;
let h: Harness;
let dir: string;
let env: EnvInput;

async function refund(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await refundCommand(args, env, {
    out: (t) => void out.push(t),
    err: (t) => void err.push(t),
  });
  return { code, out: out.join(''), err: err.join('') };
}

beforeAll(async () => {
  // Devnet's identity, as sandbox mode has: stock clients pay only networks they know.
  chains = await startChains({ as: 'devnet' });
  dir = mkdtempSync(join(tmpdir(), 'tollgate-refund-v2-'));
  const databaseUrl = `sqlite:${join(dir, 'tollgate.db')}`;
  h = await startHarness({ chains, databaseUrl });
  await h.store.projects.update(h.project.id, { x402Exact: true });
  h.deps.catalog.invalidate();
  const solanaKey = newSolanaKey();
  saveSolanaKeyFile(join(dir, 'sandbox', 'platform-solana.json'), solanaKey);
  saveSuiKeyFile(join(dir, 'sandbox', 'platform-sui.key'), newSuiKey());
  await chains.solana.faucet(solanaKey.address, 100_000_000n);
  env = {
    TOLLGATE_NETWORK: 'sandbox',
    TOLLGATE_DATA_DIR: dir,
    DATABASE_URL: databaseUrl,
    SOLANA_RPC_URL: chains.solana.url,
    SUI_RPC_URL: chains.sui.url,
    TOLLGATE_UNDELIVERED_AFTER_SEC: '1',
    LOG_LEVEL: 'silent',
  };
}, 60_000);

afterAll(async () => {
  await h?.close();
  await chains?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('refunding a v2 payment that was charged and never delivered', () => {
  it('pays the payer back the gross and cancels the pending payable', async () => {
    const key = newSolanaKey();
    await chains.solana.faucet(key.address, 1_000_000n, 0n);
    const signer = await createKeyPairSignerFromBytes(key.secretKey);
    const client = new x402Client()
      .register(
        'solana:*',
        new ExactSvmScheme(toClientSvmSigner(signer as never), { rpcUrl: chains.solana.url }),
      )
      .setSpendControls({
        allowedAssets: [{ network: SANDBOX_CAIP2, asset: chains.solana.mint, maxAmountPerPayment: '100000' }],
      });
    let signature: string | null = null;
    const recording: typeof fetch = async (input, init) => {
      const headers = new Headers(input instanceof Request ? input.headers : init?.headers);
      signature ??= headers.get('payment-signature');
      return fetch(input, init);
    };
    const pay = wrapFetchWithPayment(recording, client);
    const url = `${h.baseUrl}/p/${h.project.slug}/items?refund=v2`;

    // The answer starts (so the payment is sent on-chain), then stalls until the endpoint's deadline.
    h.upstream.mode = 'stall_body';
    const outcome = await pay(url).then(
      (r) =>
        r.text().then(
          () => 'complete',
          () => 'cut',
        ),
      () => 'cut',
    );
    expect(outcome).toBe('cut');
    expect(signature).not.toBeNull();
    expect(await chains.solana.usdcBalance(key.address)).toBe(1_000_000n - GROSS);
    const calls = h.upstream.calls('/base/items').length;

    await new Promise((r) => setTimeout(r, 1_200));
    const [payment] = (await h.store.refunds.undelivered({ createdBeforeMs: Date.now(), limit: 100 })).filter(
      (p) => p.payer === key.address,
    );
    expect(payment).toMatchObject({ x402Version: 2, amount: GROSS, state: 'retryable' });
    const payable = await h.store.payables.byRedemption(payment!.id);
    expect(payable).toMatchObject({ state: 'pending', amount: 10_000n });

    const run = await refund(['--all', '--chain', 'solana', '--json']);
    expect(run.code, run.err + run.out).toBe(0);
    expect(JSON.parse(run.out)).toMatchObject({
      ok: true,
      refunded: 1,
      lines: [
        { redemptionId: payment!.id, state: 'refunded', amountAtomic: '11000', payableId: payable!.id },
      ],
    });
    expect(await chains.solana.usdcBalance(key.address)).toBe(1_000_000n);
    expect(await h.store.payables.byRedemption(payment!.id)).toMatchObject({ state: 'cancelled' });
    expect(await h.store.refunds.byRedemption(payment!.id)).toMatchObject({
      state: 'refunded',
      providerKept: 0n,
    });

    // The same payment again: refused, nothing forwarded, nothing sent.
    h.upstream.mode = 'ok';
    const again = await fetch(url, { headers: { 'payment-signature': signature! } });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: 'conflict', reason: 'payment_refunded' });
    expect(h.upstream.calls('/base/items')).toHaveLength(calls);
    expect(await chains.solana.usdcBalance(key.address)).toBe(1_000_000n);
    expect((await refund(['--all'])).out).toContain('nothing to refund');
  }, 60_000);
});
