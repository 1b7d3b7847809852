/**
 * End to end on both chains: 402 → pay with the real wallet on the sandbox chain →
 * retry → the upstream's answer, the right balances, and a clean forwarded request.
 */
import { request } from 'node:http';
import { payFetch } from '@tollgate/client';
import { decodePaymentReceipt, parseAmount, USDC_SOLANA_MINT, USDC_SUI_COIN_TYPE } from '@tollgate/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness, UPSTREAM_KEY } from '../support/gateway-harness.ts';
import { challenge } from '../support/x402.ts';

let h: Harness;

function rawGet(base: string, target: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path: target, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('paid marketplace proxy', () => {
  it('answers an unpaid request with the exact SPEC 402 body', async () => {
    const url = `${h.baseUrl}/p/${h.project.slug}/items?color=red`;
    const { res, requirement } = await challenge(url);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(requirement).toMatchObject({
      error: 'payment_required',
      x402Version: 1,
      scheme: 'exact_split',
      resource: `GET /p/${h.project.slug}/items`,
      description: 'GET items',
    });
    expect(requirement.nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(requirement.requestHash).toMatch(/^[0-9a-f]{64}$/);
    expect(typeof requirement.paymentRequirementId).toBe('string');
    const ttl = Date.parse(requirement.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(250_000);
    expect(ttl).toBeLessThanOrEqual(300_000);
    expect(requirement.accepts).toHaveLength(2);
    const byChain = Object.fromEntries(requirement.accepts.map((a) => [a.chain, a]));
    expect(byChain['solana']).toEqual({
      chain: 'solana',
      network: 'localnet',
      asset: 'USDC',
      totalAmount: '0.011',
      decimals: 6,
      mint: USDC_SOLANA_MINT,
      memo: `tollgate:v1:${requirement.nonce}`,
      splits: [
        { recipientType: 'provider', payTo: h.recipients.solana.provider, amount: '0.01' },
        { recipientType: 'platform', payTo: h.recipients.solana.platform, amount: '0.001' },
      ],
    });
    expect(byChain['sui']).toMatchObject({ coinType: USDC_SUI_COIN_TYPE, totalAmount: '0.011' });
    expect(requirement.cost?.total).toEqual({ amount: '0.011', asset: 'USDC' });
  });

  it('gives a free endpoint a single platform split', async () => {
    const { requirement } = await challenge(`${h.baseUrl}/p/${h.project.slug}/free`);
    for (const option of requirement.accepts) {
      expect(option.splits).toEqual([
        { recipientType: 'platform', payTo: expect.any(String), amount: '0.001' },
      ]);
      expect(option.totalAmount).toBe('0.001');
    }
  });

  for (const chain of ['solana', 'sui'] as const) {
    it(`pays on ${chain} and gets the upstream's answer, with the split balances credited`, async () => {
      const wallet = await h.newPayer(chain, '5');
      const chainSandbox = h.chains[chain];
      const { provider, platform } = h.recipients[chain];
      const before = {
        provider: await chainSandbox.usdcBalance(provider),
        platform: await chainSandbox.usdcBalance(platform),
      };
      const pay = payFetch(fetch, { wallets: [wallet] });
      const body = JSON.stringify({ sku: 'äpple', qty: 2 });
      const upstreamBefore = h.upstream.calls().length;
      const res = await pay(`${h.baseUrl}/p/${h.project.slug}/orders/new?ref=a%20b&ref=c`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: 'Bearer caller-session',
          cookie: 'session=abc',
          'x-service-internal': 'secret',
          'x-forwarded-for': '6.6.6.6',
          'x-api-key': 'client-tries-to-override',
        },
        body,
      });
      expect(res.status).toBe(200);
      const json = (await res.json()) as { ok: boolean; url: string; body: string; contentType: string };
      expect(json.ok).toBe(true);
      expect(json.url).toBe('/base/orders/new?ref=a%20b&ref=c');
      expect(json.body).toBe(body);
      expect(json.contentType).toBe('application/json');
      expect(res.headers.get('set-cookie')).toBeNull();

      const receipt = decodePaymentReceipt(res.headers.get('x-payment-response'));
      expect(receipt).toMatchObject({ success: true, chain, network: 'localnet', payer: wallet.address });
      expect(pay.spent).toBe(parseAmount('0.022', 6));

      expect(await chainSandbox.usdcBalance(provider)).toBe(before.provider + 20_000n);
      expect(await chainSandbox.usdcBalance(platform)).toBe(before.platform + 2_000n);

      const calls = h.upstream.calls();
      expect(calls.length).toBe(upstreamBefore + 1);
      const seen = calls.at(-1)!;
      expect(seen.headers['x-payment']).toBeUndefined();
      expect(seen.headers['authorization']).toBeUndefined();
      expect(seen.headers['cookie']).toBeUndefined();
      expect(Object.keys(seen.headers).filter((k) => k.startsWith('x-service-'))).toEqual([]);
      expect(seen.headers['x-forwarded-for']).toBe('127.0.0.1');
      expect(seen.headers['x-api-key']).toBe(UPSTREAM_KEY);
    });
  }

  it('answers 404 endpoint_not_found for an unknown path and 503 for a disabled endpoint, never 402', async () => {
    const missing = await fetch(`${h.baseUrl}/p/${h.project.slug}/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({
      error: 'endpoint_not_found',
      requestId: expect.any(String),
    });
    const off = await fetch(`${h.baseUrl}/p/${h.project.slug}/off`);
    expect(off.status).toBe(503);
    expect(await off.json()).toMatchObject({ error: 'endpoint_unavailable' });
    const wrongMethod = await fetch(`${h.baseUrl}/p/${h.project.slug}/items`, { method: 'DELETE' });
    expect(wrongMethod.status).toBe(404);
  });

  it('rejects an escaping path with invalid_path before any 402', async () => {
    // Raw request targets: fetch would normalise dot segments before sending.
    for (const path of [
      'items/..%2f..%2fadmin',
      'a//b',
      'items/%2e%2e/x',
      'items/../../admin',
      'items/./x',
    ]) {
      const { status, body } = await rawGet(h.baseUrl, `/p/${h.project.slug}/${path}`);
      expect({ path, status }).toEqual({ path, status: 400 });
      expect(JSON.parse(body)).toMatchObject({ error: 'invalid_path' });
    }
  });
});
