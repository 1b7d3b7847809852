/**
 * x402 v2 on Sui through the real gateway, paid with Tollgate's client: the `sui:` entry
 * of a 402's `PAYMENT-REQUIRED` (opted-in marketplace project, chat completions) is signed
 * with `suiExactV2PaymentSignature` — a complete transaction the gateway executes only
 * after a deliverable upstream answer. The platform gets the whole amount and the provider
 * a payable; the same header replays; an upstream failure charges nothing; a payment for
 * another request moves nothing.
 */
import { type SuiWallet, suiExactV2PaymentSignature, suiWallet } from '@tollgate/client';
import {
  decodePaymentRequired,
  decodePaymentSignature,
  decodeSettleResponse,
  encodePaymentSignature,
  parseAmount,
  suiCaip2,
  type V2PaymentRequired,
  type V2Requirements,
} from '@tollgate/protocol';
import { newSuiKey } from '@tollgate/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

let h: Harness;
let url: string;
const PRICE = 10_000n; // items: 0.01 USDC
const FEE = 1_000n; // 10 %, as the harness sets it

beforeAll(async () => {
  h = await startHarness();
  await h.store.projects.update(h.project.id, { x402Exact: true });
  h.deps.catalog.invalidate();
  url = `${h.baseUrl}/p/${h.project.slug}/items`;
});
afterAll(async () => {
  await h?.close();
});

/** A fresh payer with `usdc` atomic USDC and 10 SUI for gas. */
function newPayer(usdcAtomic = 1_000_000n): SuiWallet {
  const key = newSuiKey();
  h.chains.sui.faucet(key.address, usdcAtomic);
  return suiWallet({ secretKey: key.secretKey, rpcUrl: h.chains.sui.url });
}

/** The 402 for a request and its `sui:` PAYMENT-REQUIRED entry. */
async function suiOffer(target: string, init?: RequestInit) {
  const res = await fetch(target, init);
  expect(res.status).toBe(402);
  const required: V2PaymentRequired = decodePaymentRequired(res.headers.get('payment-required'));
  const entry = required.accepts.find((a) => a.network.startsWith('sui:'));
  if (!entry) throw new Error(`no sui: entry in ${JSON.stringify(required.accepts)}`);
  return { required, entry };
}

async function pay(wallet: SuiWallet, target: string, init?: RequestInit) {
  const { required, entry } = await suiOffer(target, init);
  const signed = await suiExactV2PaymentSignature(wallet, entry, { resource: required.resource });
  return { entry, required, ...signed };
}

const withSignature = (header: string, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { ...(init.headers as Record<string, string> | undefined), 'payment-signature': header },
});

async function snapshot(payer: string) {
  const { platform, provider } = h.recipients.sui;
  const sui = h.chains.sui;
  return {
    payer: sui.balance(payer),
    payerSui: sui.balance(payer, sui.suiCoinType),
    platform: sui.balance(platform),
    provider: sui.balance(provider),
  };
}

describe('Tollgate’s client pays x402 v2 on Sui', () => {
  it('offers a sui: entry for the platform with the memo, on the node’s CAIP-2 network', async () => {
    const { entry } = await suiOffer(url);
    expect(entry).toMatchObject({
      scheme: 'exact',
      network: suiCaip2(h.chains.sui.chainId),
      amount: String(PRICE + FEE),
      asset: h.chains.sui.coinType,
      payTo: h.recipients.sui.platform,
    });
    expect(typeof entry.extra.memo).toBe('string');
    expect(entry.extra.feePayer).toBeUndefined();
  });

  it('pays a marketplace endpoint: the platform gets it all, the provider a payable', async () => {
    const wallet = newPayer();
    const { header, digest } = await pay(wallet, url);
    const before = await snapshot(wallet.address);
    const calls = h.upstream.calls('/base/items').length;

    const res = await fetch(url, withSignature(header));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true });
    const receipt = decodeSettleResponse(res.headers.get('payment-response'));
    expect(receipt).toMatchObject({
      success: true,
      transaction: digest,
      network: suiCaip2(h.chains.sui.chainId),
      amount: String(PRICE + FEE),
    });
    expect(receipt.payer?.toLowerCase()).toBe(wallet.address.toLowerCase());

    const after = await snapshot(wallet.address);
    expect(after.payer).toBe(before.payer - (PRICE + FEE));
    expect(after.platform).toBe(before.platform + PRICE + FEE);
    expect(after.provider).toBe(before.provider);
    // The payer paid its own gas, in SUI.
    expect(after.payerSui).toBeLessThan(before.payerSui);
    expect(h.upstream.calls('/base/items').length).toBe(calls + 1);

    const redemption = await h.store.redemptions.byTx('sui', h.config.chainNetwork, digest);
    expect(redemption?.state).toBe('delivered');
    expect(await h.store.payables.byRedemption(redemption!.id)).toMatchObject({
      chain: 'sui',
      recipient: h.recipients.sui.provider,
      amount: PRICE,
      state: 'pending',
    });
  });

  it('replays the stored answer for the same PAYMENT-SIGNATURE, paying and calling nothing more', async () => {
    const wallet = newPayer();
    const { header } = await pay(wallet, url);
    const first = await fetch(url, withSignature(header));
    expect(first.status).toBe(200);
    const body = await first.text();
    const receipt = first.headers.get('payment-response');
    const before = await snapshot(wallet.address);
    const calls = h.upstream.calls('/base/items').length;

    const again = await fetch(url, withSignature(header));
    expect(again.status).toBe(200);
    expect(again.headers.get('x-tollgate-replay')).toBe('true');
    expect(await again.text()).toBe(body);
    expect(decodeSettleResponse(again.headers.get('payment-response')).transaction).toBe(
      decodeSettleResponse(receipt).transaction,
    );
    expect(await snapshot(wallet.address)).toEqual(before);
    expect(h.upstream.calls('/base/items').length).toBe(calls);
  });

  it('charges nothing when the upstream fails: the transaction is never executed; the same payment works later', async () => {
    const wallet = newPayer();
    const { header, digest } = await pay(wallet, url);
    const before = await snapshot(wallet.address);
    h.upstream.mode = 'fail500';
    try {
      const res = await fetch(url, withSignature(header));
      expect(res.status).toBe(502);
      expect(await res.json()).toMatchObject({ error: 'upstream_error' });
      const failed = decodeSettleResponse(res.headers.get('payment-response'));
      expect(failed).toMatchObject({ success: false, transaction: '' });
    } finally {
      h.upstream.mode = 'ok';
    }
    // Not a coin moved, not even gas.
    expect(await snapshot(wallet.address)).toEqual(before);
    expect(
      await h.store.payables.byRedemption(
        (await h.store.redemptions.byTx('sui', h.config.chainNetwork, digest))!.id,
      ),
    ).toBeNull();

    // The upstream is back: the same signed payment pays, once.
    const retry = await fetch(url, withSignature(header));
    expect(retry.status).toBe(200);
    expect(decodeSettleResponse(retry.headers.get('payment-response'))).toMatchObject({
      success: true,
      transaction: digest,
    });
    const after = await snapshot(wallet.address);
    expect(after.payer).toBe(before.payer - (PRICE + FEE));
    expect(after.platform).toBe(before.platform + PRICE + FEE);
  });

  it('refuses a payment for another query of the same endpoint (request_mismatch), moving nothing', async () => {
    const wallet = newPayer();
    const { header } = await pay(wallet, url);
    const before = await snapshot(wallet.address);
    const calls = h.upstream.calls('/base/items').length;
    const res = await fetch(`${url}?other=1`, withSignature(header));
    expect(res.status).toBe(402);
    expect(((await res.json()) as { reason?: string }).reason).toBe('request_mismatch');
    expect(await snapshot(wallet.address)).toEqual(before);
    expect(h.upstream.calls('/base/items').length).toBe(calls);
  });

  it('refuses a payment whose echoed entry was altered (proof_mismatch), moving nothing', async () => {
    const wallet = newPayer();
    const { entry, required } = await suiOffer(url);
    // Signed for a tenth of the amount, echoing an entry that says so.
    const cheap: V2Requirements = { ...entry, amount: String((PRICE + FEE) / 10n) };
    const { header } = await suiExactV2PaymentSignature(wallet, cheap, { resource: required.resource });
    const before = await snapshot(wallet.address);
    const res = await fetch(url, withSignature(header));
    expect(res.status).toBe(402);
    expect(((await res.json()) as { reason?: string }).reason).toBe('proof_mismatch');
    expect(await snapshot(wallet.address)).toEqual(before);
  });

  it('refuses a transaction paying less than the entry it echoes verbatim, moving nothing', async () => {
    const wallet = newPayer();
    const { entry, required } = await suiOffer(url);
    const cheap = await suiExactV2PaymentSignature(
      wallet,
      { ...entry, amount: String((PRICE + FEE) / 10n) },
      { resource: required.resource },
    );
    const { header } = await suiExactV2PaymentSignature(wallet, entry, { resource: required.resource });
    const honest = decodePaymentSignature(header);
    const tampered = encodePaymentSignature({ ...honest, payload: cheap.paymentPayload.payload });
    const before = await snapshot(wallet.address);
    const calls = h.upstream.calls('/base/items').length;
    const res = await fetch(url, withSignature(tampered));
    expect(res.status).toBe(402);
    expect(((await res.json()) as { reason?: string }).reason).toBe(
      'invalid_exact_sui_payload_amount_mismatch',
    );
    expect(await snapshot(wallet.address)).toEqual(before);
    expect(h.upstream.calls('/base/items').length).toBe(calls);
  });

  it('pays a chat completion (its 402 carries PAYMENT-REQUIRED too)', async () => {
    const wallet = newPayer(parseAmount('1', 6));
    const target = `${h.baseUrl}/v1/chat/completions`;
    const init: RequestInit = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'tollgate-dev-chat',
        messages: [{ role: 'user', content: 'Say hello' }],
        max_tokens: 8,
      }),
    };
    const { header, digest, entry } = await pay(wallet, target, init);
    expect(entry.payTo).toBe(h.recipients.sui.platform);
    const before = await snapshot(wallet.address);
    const res = await fetch(target, withSignature(header, init));
    expect(res.status).toBe(200);
    const completion = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(completion.choices[0]?.message.content).toBeTruthy();
    expect(decodeSettleResponse(res.headers.get('payment-response'))).toMatchObject({
      success: true,
      transaction: digest,
      amount: entry.amount,
    });
    const after = await snapshot(wallet.address);
    expect(after.payer).toBe(before.payer - BigInt(entry.amount));
    expect(after.platform).toBe(before.platform + BigInt(entry.amount));
  });
});
