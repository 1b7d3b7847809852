/**
 * A stock x402 v2 client (the pinned @x402/fetch + @x402/svm, unmodified) pays Tollgate
 * on the sandbox Solana chain with USDC and no SOL: the gateway is the fee payer and
 * facilitator. The payment is sent only after a deliverable upstream answer; the same
 * PAYMENT-SIGNATURE replays; tampered or sponsor-draining payments move nothing.
 */
import { createKeyPairSignerFromBytes, createSolanaRpc, address as toAddress } from '@solana/kit';
import {
  decodePaymentRequired,
  decodeSettleResponse,
  encodePaymentSignature,
  SOLANA_DEVNET_GENESIS_HASH,
  solanaCaip2,
  type V2PaymentPayload,
  type V2Requirements,
} from '@tollgate/protocol';
import { newSolanaKey } from '@tollgate/sandbox';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { toClientSvmSigner } from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Chains, type Harness, startChains, startHarness } from '../support/gateway-harness.ts';

let h: Harness;
let chains: Chains;
let url: string;
let rpc: ReturnType<typeof createSolanaRpc>;
const SANDBOX_CAIP2 = solanaCaip2(SOLANA_DEVNET_GENESIS_HASH) as `${string}:${string}`;
const PRICE = 10_000n; // items: 0.01 USDC
const FEE = 1_000n; // 10 %, as the harness sets it

beforeAll(async () => {
  // Devnet's identity, as sandbox mode has: stock clients pay only networks they know.
  chains = await startChains({ as: 'devnet' });
  h = await startHarness({ chains });
  rpc = createSolanaRpc(h.chains.solana.url);
  await h.store.projects.update(h.project.id, { x402Exact: true });
  h.deps.catalog.invalidate();
  url = `${h.baseUrl}/p/${h.project.slug}/items`;
});
afterAll(async () => {
  await h?.close();
  await chains?.close();
});

const sol = async (owner: string) => (await rpc.getBalance(toAddress(owner)).send()).value;
const usdc = (owner: string) => h.chains.solana.usdcBalance(owner);

/** A payer with `usdc` atomic USDC and not one lamport. */
async function stockPayer(usdcAtomic = 1_000_000n) {
  const key = newSolanaKey();
  await h.chains.solana.faucet(key.address, usdcAtomic, 0n);
  const signer = await createKeyPairSignerFromBytes(key.secretKey);
  const client = new x402Client()
    .register(
      'solana:*',
      new ExactSvmScheme(toClientSvmSigner(signer as never), { rpcUrl: h.chains.solana.url }),
    )
    // The sandbox's USDC sits at mainnet's mint address on a chain with devnet's identity:
    // not a default asset for devnet, so the client is told about it (capped at 0.10 USDC).
    .setSpendControls({
      allowedAssets: [{ network: SANDBOX_CAIP2, asset: h.chains.solana.mint, maxAmountPerPayment: '100000' }],
    });
  const sent: Headers[] = [];
  const recording: typeof fetch = async (input, init) => {
    sent.push(new Headers(input instanceof Request ? input.headers : init?.headers));
    return fetch(input, init);
  };
  return { address: key.address, signer, pay: wrapFetchWithPayment(recording, client), sent };
}

async function snapshot(payer: string) {
  const { platform, provider } = h.recipients.solana;
  return {
    payerUsdc: await usdc(payer),
    payerSol: await sol(payer),
    platform: await usdc(platform),
    provider: await usdc(provider),
    sponsorSol: await sol(h.sponsor.address),
  };
}

describe('a stock @x402/fetch client', () => {
  it('pays a marketplace endpoint with USDC and zero SOL; the platform gets it all, the provider a payable', async () => {
    const payer = await stockPayer();
    const before = await snapshot(payer.address);
    const calls = h.upstream.calls('/base/items').length;
    const res = await payer.pay(url);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true });
    const receipt = decodeSettleResponse(res.headers.get('payment-response'));
    expect(receipt).toMatchObject({ success: true, payer: payer.address, amount: String(PRICE + FEE) });
    const after = await snapshot(payer.address);
    expect(after.payerUsdc).toBe(before.payerUsdc - (PRICE + FEE));
    expect(after.payerSol).toBe(0n);
    expect(after.platform).toBe(before.platform + PRICE + FEE);
    expect(after.provider).toBe(before.provider);
    expect(after.sponsorSol).toBeLessThan(before.sponsorSol);
    expect(h.upstream.calls('/base/items').length).toBe(calls + 1);
    const redemption = await h.store.redemptions.byTx('solana', h.config.chainNetwork, receipt.transaction);
    expect(redemption?.state).toBe('delivered');
    const payable = await h.store.payables.byRedemption(redemption!.id);
    expect(payable).toMatchObject({
      recipient: h.recipients.solana.provider,
      amount: PRICE,
      state: 'pending',
    });
  });

  it('gets the stored answer again for the same PAYMENT-SIGNATURE, paying and calling nothing more', async () => {
    const payer = await stockPayer();
    const first = await payer.pay(url);
    expect(first.status).toBe(200);
    const body = await first.text();
    const header = payer.sent.at(-1)?.get('payment-signature');
    expect(header).toBeTruthy();
    const before = await snapshot(payer.address);
    const calls = h.upstream.calls('/base/items').length;
    const again = await fetch(url, { headers: { 'payment-signature': header! } });
    expect(again.status).toBe(200);
    expect(again.headers.get('x-tollgate-replay')).toBe('true');
    expect(await again.text()).toBe(body);
    expect(await snapshot(payer.address)).toEqual(before);
    expect(h.upstream.calls('/base/items').length).toBe(calls);
  });

  it('replays a delivered PAYMENT-SIGNATURE from the database even while the Solana node is down', async () => {
    const payer = await stockPayer();
    expect((await payer.pay(url)).status).toBe(200);
    const header = payer.sent.at(-1)?.get('payment-signature');
    h.chains.solana.setFault('rpc_down');
    try {
      const again = await fetch(url, { headers: { 'payment-signature': header! } });
      expect(again.status).toBe(200);
      expect(again.headers.get('x-tollgate-replay')).toBe('true');
    } finally {
      h.chains.solana.setFault('none');
    }
  });

  it('is not charged when the upstream fails: the transaction is never sent', async () => {
    const payer = await stockPayer();
    const before = await snapshot(payer.address);
    h.upstream.mode = 'fail500';
    try {
      const res = await payer.pay(url);
      expect(res.status).toBe(502);
      expect(await res.json()).toMatchObject({ error: 'upstream_error' });
    } finally {
      h.upstream.mode = 'ok';
    }
    expect(await snapshot(payer.address)).toEqual(before);
  });

  it('pays a chat completion through the openai SDK with the wrapped fetch', async () => {
    const { default: OpenAI } = await import('openai');
    const payer = await stockPayer();
    const before = await usdc(payer.address);
    const openai = new OpenAI({ baseURL: `${h.baseUrl}/v1`, apiKey: 'not-used', fetch: payer.pay });
    const completion = await openai.chat.completions.create({
      model: 'tollgate-dev-chat',
      messages: [{ role: 'user', content: 'Say hello' }],
      max_tokens: 8,
    });
    expect(completion.choices[0]?.message.content).toBeTruthy();
    const paid = before - (await usdc(payer.address));
    expect(paid).toBeGreaterThan(0n);
    expect(await sol(payer.address)).toBe(0n);
  });
});

/** One offer from a fresh 402 and the stock client's payload for (a possibly altered copy of) it. */
async function offerAndPayload(alter: (r: V2Requirements) => V2Requirements = (r) => r) {
  const payer = await stockPayer();
  const res = await fetch(url);
  const required = decodePaymentRequired(res.headers.get('payment-required'));
  const offered = required.accepts.find((a) => a.network.startsWith('solana:'))!;
  const scheme = new ExactSvmScheme(toClientSvmSigner(payer.signer as never), {
    rpcUrl: h.chains.solana.url,
  });
  const { payload } = await scheme.createPaymentPayload(2, alter(offered) as never);
  return { payer, offered, payload: payload as Record<string, unknown> };
}

async function expectNothingMoved(send: () => Promise<Response>, payer: string, reason?: string) {
  const before = await snapshot(payer);
  const calls = h.upstream.calls('/base/items').length;
  const res = await send();
  expect(res.status).toBe(402);
  if (reason) expect(((await res.json()) as { reason?: string }).reason).toBe(reason);
  expect(await snapshot(payer)).toEqual(before);
  expect(h.upstream.calls('/base/items').length).toBe(calls);
}

const signature = (accepted: V2Requirements, payload: Record<string, unknown>) =>
  encodePaymentSignature({ x402Version: 2, accepted, payload } satisfies V2PaymentPayload);

describe('a tampered v2 payment moves nothing', () => {
  for (const [what, alter] of [
    ['amount', (r: V2Requirements) => ({ ...r, amount: '1' })],
    ['payTo', (r: V2Requirements) => ({ ...r, payTo: newSolanaKey().address })],
    ['mint', (r: V2Requirements) => ({ ...r, asset: h.chains.solana.otherMint })],
  ] as const) {
    it(`a transaction paying another ${what} than offered, echoing the offer`, async () => {
      const { payer, offered, payload } = await offerAndPayload(alter);
      await expectNothingMoved(
        () => fetch(url, { headers: { 'payment-signature': signature(offered, payload) } }),
        payer.address,
      );
    });

    it(`an echoed offer with another ${what}`, async () => {
      const { payer, offered, payload } = await offerAndPayload(alter);
      await expectNothingMoved(
        () => fetch(url, { headers: { 'payment-signature': signature(alter(offered), payload) } }),
        payer.address,
        'proof_mismatch',
      );
    });
  }

  it('a payment for another query of the same endpoint', async () => {
    const { payer, offered, payload } = await offerAndPayload();
    await expectNothingMoved(
      () => fetch(`${url}?other=1`, { headers: { 'payment-signature': signature(offered, payload) } }),
      payer.address,
      'request_mismatch',
    );
  });
});
