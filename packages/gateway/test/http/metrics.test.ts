/**
 * Metrics (issue 12): /metrics is the operator's only (per-project labels are never
 * public); standard process_ and nodejs_ names; 402s by route family; payments accepted
 * by chain and format and refused by reason (every refusal, invalid_payment_header
 * included); USDC volume of delivered payments in atomic units; upstream latency.
 */

import { suiExactV2PaymentSignature, suiWallet } from '@tollgate/client';
import { decodePaymentRequired } from '@tollgate/protocol';
import { newSuiKey } from '@tollgate/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { challenge, payFor, withPayment } from '../support/x402.ts';

let h: Harness;
let url: string;
const TOTAL = 11_000; // items: 0.01 USDC + 10 % fee, atomic units

beforeAll(async () => {
  h = await startHarness();
  await h.store.projects.update(h.project.id, { x402Exact: true });
  h.deps.catalog.invalidate();
  url = `${h.baseUrl}/p/${h.project.slug}/items`;
});
afterAll(async () => {
  await h?.close();
});

async function scrape(): Promise<string> {
  const res = await fetch(`${h.baseUrl}/metrics`, {
    headers: { authorization: `Bearer ${h.config.adminToken}` },
  });
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of one sample, `name{labels}` exactly as exposed (labels in declaration order). */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  if (!line) throw new Error(`no sample ${series}`);
  return Number(line.slice(series.length + 1));
}
const maybe = (text: string, series: string) => {
  try {
    return sample(text, series);
  } catch {
    return 0;
  }
};

describe('/metrics', () => {
  it('needs the operator token: 401 without it or with another, and nothing of the metrics', async () => {
    await challenge(url);
    for (const headers of [
      {},
      { authorization: 'Bearer not-the-operator-token-000000' },
      { authorization: 'Basic x' },
    ]) {
      const res = await fetch(`${h.baseUrl}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      const body = await res.text();
      expect(JSON.parse(body)).toMatchObject({ error: 'unauthorized' });
      expect(body).not.toContain(h.project.slug);
      expect(body).not.toContain('tollgate_');
    }
    // The operator sees them, per-project labels included.
    expect(await scrape()).toContain('tollgate_http_requests_total');
  });

  it('has the default process and Node.js metrics under their standard names', async () => {
    const text = await scrape();
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(text).toMatch(/^process_start_time_seconds /m);
    expect(text).toMatch(/^nodejs_heap_size_total_bytes /m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect(text).not.toMatch(/tollgate_(process|nodejs)_/);
  });

  it('counts 402s by route family', async () => {
    const series = 'tollgate_payment_required_total{route="marketplace"}';
    const before = maybe(await scrape(), series);
    await challenge(url);
    await challenge(url);
    expect(sample(await scrape(), series)).toBe(before + 2);
  });

  it('counts every refused payment by reason, invalid_payment_header included', async () => {
    const reason = (f: string, r: string) => `tollgate_payments_rejected_total{format="${f}",reason="${r}"}`;
    const before = await scrape();

    expect((await fetch(url, { headers: { 'x-payment': 'garbage' } })).status).toBe(400);
    expect((await fetch(url, { headers: { 'payment-signature': 'garbage' } })).status).toBe(400);
    const wallet = await h.newPayer('solana');
    const { requirement } = await challenge(url);
    const { header } = await payFor(wallet, requirement);
    // For another request: request_mismatch; for another endpoint: requirement_mismatch.
    expect((await fetch(`${url}?x=1`, withPayment({}, header))).status).toBe(402);
    expect((await fetch(`${h.baseUrl}/p/${h.project.slug}/big`, withPayment({}, header))).status).toBe(402);

    const after = await scrape();
    const delta = (f: string, r: string) => sample(after, reason(f, r)) - maybe(before, reason(f, r));
    expect(delta('v1', 'invalid_payment_header')).toBe(1);
    expect(delta('v2', 'invalid_payment_header')).toBe(1);
    expect(delta('v1', 'request_mismatch')).toBe(1);
    expect(delta('v1', 'requirement_mismatch')).toBe(1);
  });

  it('counts accepted payments by chain and format, and the USDC volume once per delivery', async () => {
    const accepted = (c: string, f: string) => `tollgate_payments_accepted_total{chain="${c}",format="${f}"}`;
    const volume = (c: string) => `tollgate_usdc_volume_atomic_total{chain="${c}"}`;
    const before = await scrape();

    const wallet = await h.newPayer('solana');
    const { requirement } = await challenge(url);
    const { header } = await payFor(wallet, requirement);
    expect((await fetch(url, withPayment({}, header))).status).toBe(200);
    // A replay is neither a new payment nor new volume.
    expect((await fetch(url, withPayment({}, header))).headers.get('x-tollgate-replay')).toBe('true');

    const key = newSuiKey();
    h.chains.sui.faucet(key.address, 1_000_000n);
    const sui = suiWallet({ secretKey: key.secretKey, rpcUrl: h.chains.sui.url });
    const offer = await fetch(url);
    const required = decodePaymentRequired(offer.headers.get('payment-required'));
    const entry = required.accepts.find((a) => a.network.startsWith('sui:'))!;
    const signed = await suiExactV2PaymentSignature(sui, entry, { resource: required.resource });
    expect((await fetch(url, { headers: { 'payment-signature': signed.header } })).status).toBe(200);

    const after = await scrape();
    const delta = (series: string) => sample(after, series) - maybe(before, series);
    expect(delta(accepted('solana', 'v1'))).toBe(1);
    expect(delta(accepted('sui', 'v2'))).toBe(1);
    expect(delta(volume('solana'))).toBe(TOTAL);
    expect(delta(volume('sui'))).toBe(TOTAL);
  });

  it('times marketplace upstream calls by outcome', async () => {
    const count = (o: string) =>
      `tollgate_upstream_duration_seconds_count{upstream="marketplace",outcome="${o}"}`;
    const wallet = await h.newPayer('solana');
    const { requirement } = await challenge(url);
    const { header } = await payFor(wallet, requirement);
    const before = await scrape();
    h.upstream.mode = 'fail500';
    try {
      expect((await fetch(url, withPayment({}, header))).status).toBe(502);
    } finally {
      h.upstream.mode = 'ok';
    }
    // The payment stayed with its request: the retry is served.
    expect((await fetch(url, withPayment({}, header))).status).toBe(200);
    const after = await scrape();
    expect(sample(after, count('ok')) - maybe(before, count('ok'))).toBe(1);
    expect(sample(after, count('upstream_5xx')) - maybe(before, count('upstream_5xx'))).toBe(1);
    expect(after).toMatch(/^tollgate_upstream_duration_seconds_bucket\{le="0.005",upstream="marketplace"/m);
  });

  it('keeps route labels bounded: unknown paths are one family, not one label each', async () => {
    for (let i = 0; i < 3; i++) await fetch(`${h.baseUrl}/v1/random-${i}-${Date.now()}`);
    const text = await scrape();
    expect(text).not.toContain('random-');
    expect(text).toMatch(/tollgate_http_requests_total\{route="unmatched",method="GET",status="404"\} \d/);
  });
});
