import {
  type AcceptOption,
  decodePaymentProof,
  encodePaymentReceipt,
  type PaymentRequirement,
  ProtocolError,
} from '@tollgate/protocol';
import { describe, expect, it } from 'vitest';
import { retryWithProof, UndeliveredPaymentError } from './paid-retry.ts';
import { type PayEvent, payFetch } from './pay-fetch.ts';
import type { PaymentWallet } from './wallets/wallet.ts';

const requirement = (overrides: Partial<PaymentRequirement> = {}): PaymentRequirement => ({
  error: 'payment_required',
  x402Version: 1,
  scheme: 'exact_split',
  resource: 'POST /p/demo/echo',
  description: 'echo',
  expiresAt: '2030-01-01T00:00:00.000Z',
  nonce: 'nonce-1',
  requestHash: 'a'.repeat(64),
  paymentRequirementId: 'r1.k.p.m',
  accepts: [
    {
      chain: 'solana',
      network: 'localnet',
      asset: 'USDC',
      totalAmount: '0.011',
      decimals: 6,
      mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      memo: 'tollgate:v1:nonce-1',
      splits: [
        { recipientType: 'provider', payTo: 'P', amount: '0.01' },
        { recipientType: 'platform', payTo: 'F', amount: '0.001' },
      ],
    },
  ],
  ...overrides,
});

function wallet(chain: 'solana' | 'sui' = 'solana') {
  const paid: AcceptOption[] = [];
  const w: PaymentWallet & { paid: AcceptOption[] } = {
    chain,
    address: chain === 'solana' ? 'PayerSolana1111111111111111111111111111111' : `0x${'ab'.repeat(32)}`,
    paid,
    async pay(option) {
      paid.push(option);
      return '5'.repeat(88);
    },
    async chainIdentity() {
      return 'a-sandbox-chain'; // not mainnet's: the options here are on localnet
    },
  };
  return w;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** A scripted server: answers each call with the next response and records the requests. */
function server(...answers: ((req: Request) => Response)[]) {
  const seen: { url: string; method: string; body: string; payment: string | null }[] = [];
  const fetchImpl = async (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push({
      url: req.url,
      method: req.method,
      body: await req.text(),
      payment: req.headers.get('x-payment'),
    });
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)]!;
    return answer(req);
  };
  return { fetchImpl, seen };
}

describe('payFetch', () => {
  it('pays the 402 and retries the same request with X-PAYMENT', async () => {
    const s = server(
      () => json(402, requirement()),
      () => json(200, { ok: true }, { 'x-payment-response': 'receipt' }),
    );
    const w = wallet();
    const events: PayEvent['type'][] = [];
    const pay = payFetch(s.fetchImpl, { wallets: [w], onEvent: (e) => events.push(e.type) });
    const res = await pay('http://gw/p/demo/echo?x=1', {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    expect(s.seen).toHaveLength(2);
    expect(s.seen[1]).toMatchObject({ url: 'http://gw/p/demo/echo?x=1', method: 'POST', body: '{"a":1}' });
    const proof = decodePaymentProof(s.seen[1]!.payment);
    expect(proof).toMatchObject({
      nonce: 'nonce-1',
      requestHash: 'a'.repeat(64),
      payer: w.address,
      chain: 'solana',
    });
    expect(w.paid).toHaveLength(1);
    expect(pay.spent).toBe(11_000n);
    expect(events).toEqual(['challenge', 'paying', 'paid', 'done']);
  });

  it('returns responses that are not 402 untouched, and pays nothing', async () => {
    const s = server(() => json(200, { free: true }));
    const w = wallet();
    const res = await payFetch(s.fetchImpl, { wallets: [w] })('http://gw/x');
    expect(await res.json()).toEqual({ free: true });
    expect(w.paid).toHaveLength(0);
  });

  it('hands back a 402 that is not an x402 requirement without paying', async () => {
    const s = server(() => json(402, { error: 'something else' }));
    const w = wallet();
    expect((await payFetch(s.fetchImpl, { wallets: [w] })('http://gw/x')).status).toBe(402);
    expect(w.paid).toHaveLength(0);
  });

  it('refuses to pay above the per-request limit, before any money moves', async () => {
    const w = wallet();
    const pay = payFetch(server(() => json(402, requirement())).fetchImpl, {
      wallets: [w],
      maxPerRequest: '0.010999',
    });
    await expect(pay('http://gw/x')).rejects.toMatchObject({ code: 'payment_limit_exceeded' });
    expect(w.paid).toHaveLength(0);
  });

  it('refuses to exceed the session limit across calls', async () => {
    const w = wallet();
    const s = server(
      () => json(402, requirement()),
      () => json(200, {}),
      () => json(402, requirement()),
    );
    const pay = payFetch(s.fetchImpl, { wallets: [w], maxPerSession: '0.02' });
    expect((await pay('http://gw/x')).status).toBe(200);
    await expect(pay('http://gw/x')).rejects.toMatchObject({ code: 'payment_limit_exceeded' });
    expect(w.paid).toHaveLength(1);
  });

  it('throws unsupported_chain when no wallet chain is offered', async () => {
    const pay = payFetch(server(() => json(402, requirement())).fetchImpl, { wallets: [wallet('sui')] });
    const err = await pay('http://gw/x').catch((e) => e);
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err.code).toBe('unsupported_chain');
  });

  it('refuses an option whose splits do not add up to its total', async () => {
    const bad = requirement();
    bad.accepts[0]!.totalAmount = '0.001';
    const w = wallet();
    await expect(
      payFetch(server(() => json(402, bad)).fetchImpl, { wallets: [w] })('http://gw/x'),
    ).rejects.toMatchObject({
      code: 'invalid_requirement',
    });
    expect(w.paid).toHaveLength(0);
  });

  it('waits out payment_pending and retryable failures with the same proof, paying once', async () => {
    const s = server(
      () => json(402, requirement()),
      () => json(409, { error: 'payment_pending', retryable: true }, { 'retry-after': '0' }),
      () => json(502, { error: 'upstream_error', retryable: true }),
      () => json(200, { ok: true }),
    );
    const w = wallet();
    const res = await payFetch(s.fetchImpl, { wallets: [w], maxRetryDelayMs: 1 })('http://gw/x');
    expect(res.status).toBe(200);
    expect(w.paid).toHaveLength(1);
    const proofs = s.seen.slice(1).map((r) => r.payment);
    expect(new Set(proofs).size).toBe(1);
  });

  it('never pays twice when the paid retry is refused with a new 402', async () => {
    const s = server(
      () => json(402, requirement()),
      () => json(402, { ...requirement({ nonce: 'n2' }), reason: 'amount_mismatch' }),
    );
    const w = wallet();
    const res = await payFetch(s.fetchImpl, { wallets: [w] })('http://gw/x');
    expect(res.status).toBe(402);
    expect(w.paid).toHaveLength(1);
  });
});

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

describe('payFetch: quotes about to expire', () => {
  it('refuses a quote that expires within the safety margin, after asking once for a fresh one', async () => {
    const s = server(() => json(402, requirement({ expiresAt: inMs(10_000) })));
    const w = wallet();
    const err = await payFetch(s.fetchImpl, { wallets: [w] })('http://gw/x').catch((e) => e);
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err.code).toBe('quote_expired');
    expect(err.message).toMatch(/expires/);
    expect(w.paid).toHaveLength(0);
    expect(s.seen.map((r) => r.payment)).toEqual([null, null]);
  });

  it('refuses a quote that has already expired', async () => {
    const s = server(() => json(402, requirement({ expiresAt: inMs(-1_000) })));
    const w = wallet();
    await expect(payFetch(s.fetchImpl, { wallets: [w] })('http://gw/x')).rejects.toMatchObject({
      code: 'quote_expired',
    });
    expect(w.paid).toHaveLength(0);
  });

  it('pays the fresh quote when the first one was about to expire', async () => {
    const s = server(
      () => json(402, requirement({ expiresAt: inMs(5_000) })),
      () => json(402, requirement({ expiresAt: inMs(300_000), nonce: 'nonce-2' })),
      () => json(200, { ok: true }),
    );
    const w = wallet();
    const res = await payFetch(s.fetchImpl, { wallets: [w] })('http://gw/x');
    expect(res.status).toBe(200);
    expect(w.paid).toHaveLength(1);
    expect(decodePaymentProof(s.seen[2]!.payment).nonce).toBe('nonce-2');
  });

  it('pays a short quote when the caller lowers minQuoteLifetimeMs', async () => {
    const s = server(
      () => json(402, requirement({ expiresAt: inMs(10_000) })),
      () => json(200, { ok: true }),
    );
    const w = wallet();
    const res = await payFetch(s.fetchImpl, { wallets: [w], minQuoteLifetimeMs: 5_000 })('http://gw/x');
    expect(res.status).toBe(200);
    expect(w.paid).toHaveLength(1);
  });
});

/** A requirement whose one option costs `total` USDC (all to the provider). */
const priced = (total: string) => {
  const r = requirement();
  r.accepts[0] = {
    ...r.accepts[0]!,
    totalAmount: total,
    splits: [{ recipientType: 'provider', payTo: 'P', amount: total }],
  };
  return r;
};

describe('payFetch: spending cap', () => {
  it('caps one request at 0.10 USDC when the caller sets no maxPerRequest', async () => {
    const w = wallet();
    const pay = payFetch(server(() => json(402, priced('0.100001'))).fetchImpl, { wallets: [w] });
    await expect(pay('http://gw/x')).rejects.toMatchObject({
      code: 'payment_limit_exceeded',
      message: expect.stringMatching(/limit 0\.10 USDC \(the default/),
    });
    expect(w.paid).toHaveLength(0);
  });

  it('pays exactly the default cap', async () => {
    const w = wallet();
    const s = server(
      () => json(402, priced('0.1')),
      () => json(200, {}),
    );
    expect((await payFetch(s.fetchImpl, { wallets: [w] })('http://gw/x')).status).toBe(200);
    expect(w.paid).toHaveLength(1);
  });

  it('pays any price only when the caller opts out with maxPerRequest: null', async () => {
    const w = wallet();
    const s = server(
      () => json(402, priced('25')),
      () => json(200, {}),
    );
    const pay = payFetch(s.fetchImpl, { wallets: [w], maxPerRequest: null });
    expect((await pay('http://gw/x')).status).toBe(200);
    expect(pay.spent).toBe(25_000_000n);
  });
});

const retryable =
  (status: number, error: string, headers: Record<string, string> = {}, extra = {}) =>
  () =>
    json(status, { error, message: `${error} happened`, retryable: true, ...extra }, headers);

/** What the gateway sends with a delivered answer: a receipt that says success. */
const delivered = {
  'x-payment-response': encodePaymentReceipt({
    success: true,
    chain: 'solana',
    network: 'localnet',
    txHashOrDigest: '5'.repeat(88),
    payer: 'PayerSolana1111111111111111111111111111111',
    paymentRequirementId: 'r1.k.p.m',
  }),
};

describe('payFetch: paid retries', () => {
  it.each([
    [
      '429 rate_limited (retry_budget)',
      retryable(429, 'rate_limited', { 'retry-after': '0' }, { reason: 'retry_budget' }),
    ],
    ['503 service_unavailable', retryable(503, 'service_unavailable')],
    ['503 endpoint_unavailable', retryable(503, 'endpoint_unavailable')],
    ['504 upstream_timeout', retryable(504, 'upstream_timeout')],
  ])('resends the same proof after %s with retryable: true, paying once', async (_name, answer) => {
    const s = server(
      () => json(402, requirement()),
      answer,
      answer,
      () => json(200, { ok: true }, delivered),
    );
    const w = wallet();
    const res = await payFetch(s.fetchImpl, { wallets: [w], maxRetryDelayMs: 1 })('http://gw/x');
    expect(res.status).toBe(200);
    expect(w.paid).toHaveLength(1);
    expect(s.seen).toHaveLength(4);
    expect(new Set(s.seen.slice(1).map((r) => r.payment)).size).toBe(1);
  });

  it('waits what Retry-After says (seconds or an HTTP date), bounded by maxRetryDelayMs', async () => {
    const past = new Date(Date.now() - 60_000).toUTCString();
    const future = new Date(Date.now() + 60_000).toUTCString();
    const s = server(
      () => json(402, requirement()),
      retryable(503, 'service_unavailable', { 'retry-after': '0' }),
      retryable(503, 'service_unavailable', { 'retry-after': '120' }),
      retryable(503, 'service_unavailable', { 'retry-after': past }),
      retryable(503, 'service_unavailable', { 'retry-after': future }),
      retryable(503, 'service_unavailable'),
      () => json(200, {}, delivered),
    );
    const delays: number[] = [];
    const res = await payFetch(s.fetchImpl, {
      wallets: [wallet()],
      maxRetryDelayMs: 30,
      onEvent: (e) => e.type === 'retry' && delays.push(e.delayMs),
    })('http://gw/x');
    expect(res.status).toBe(200);
    // Without Retry-After the wait backs off from 500 ms, cut to the bound here.
    expect(delays).toEqual([0, 30, 0, 30, 30]);
  });

  it('returns a delivered answer as it is, even when its body looks retryable', async () => {
    const s = server(
      () => json(402, requirement()),
      () => json(409, { error: 'payment_pending', retryable: true }, delivered),
    );
    const res = await payFetch(s.fetchImpl, { wallets: [wallet()], maxRetryDelayMs: 1 })('http://gw/x');
    expect(res.status).toBe(409);
    expect(s.seen).toHaveLength(2);
  });

  it("returns the upstream's final 4xx as a Response, not an error", async () => {
    const s = server(
      () => json(402, requirement()),
      () => json(404, { detail: 'no such city' }, delivered),
    );
    const res = await payFetch(s.fetchImpl, { wallets: [wallet()] })('http://gw/x');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: 'no such city' });
  });

  it('throws the proof and the request when the retries give up on a retryable error', async () => {
    const s = server(() => json(402, requirement()), retryable(502, 'upstream_error'));
    const w = wallet();
    const events: PayEvent[] = [];
    const pay = payFetch(s.fetchImpl, {
      wallets: [w],
      maxRetries: 2,
      maxRetryDelayMs: 1,
      onEvent: (e) => events.push(e),
    });
    const err = await pay('http://gw/p/demo/echo?x=1', {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
    }).catch((e) => e);
    expect(err).toBeInstanceOf(UndeliveredPaymentError);
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err).toMatchObject({
      code: 'payment_failed',
      url: 'http://gw/p/demo/echo?x=1',
      method: 'POST',
      status: 502,
      gatewayError: 'upstream_error',
    });
    expect(err.message).toMatch(/upstream_error/);
    expect(err.proof).toBe(s.seen[1]!.payment);
    expect(decodePaymentProof(err.proof).nonce).toBe('nonce-1');
    expect(new TextDecoder().decode(err.request.body)).toBe('{"a":1}');
    expect(err.request.headers['content-type']).toBe('application/json');
    expect(err.request.headers['x-payment']).toBeUndefined();
    expect(s.seen).toHaveLength(4); // the challenge, the paid request, 2 retries
    expect(w.paid).toHaveLength(1);
    expect(events.find((e) => e.type === 'paid')).toMatchObject({ proof: err.proof });
  });

  it('throws the proof when the gateway cannot be reached after paying', async () => {
    let calls = 0;
    const fetchImpl = async () => {
      if (++calls === 1) return json(402, requirement());
      throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') });
    };
    const w = wallet();
    const err = await payFetch(fetchImpl, { wallets: [w], maxRetries: 1, maxRetryDelayMs: 1 })(
      'http://gw/x',
    ).catch((e) => e);
    expect(err).toBeInstanceOf(UndeliveredPaymentError);
    expect(err.status).toBeUndefined();
    expect(err.cause).toBeInstanceOf(TypeError);
    expect(decodePaymentProof(err.proof).requestHash).toBe('a'.repeat(64));
    expect(calls).toBe(3);
    expect(w.paid).toHaveLength(1);
  });
});

describe('retryWithProof', () => {
  async function givenUp() {
    const s = server(() => json(402, requirement()), retryable(503, 'endpoint_unavailable'));
    const pay = payFetch(s.fetchImpl, { wallets: [wallet()], maxRetries: 0 });
    const err = await pay('http://gw/p/demo/echo', { method: 'POST', body: 'hi' }).catch((e) => e);
    expect(err).toBeInstanceOf(UndeliveredPaymentError);
    return err as UndeliveredPaymentError;
  }

  it('sends the same request with the same proof later, and pays nothing', async () => {
    const { request } = await givenUp();
    const later = server(() => json(200, { ok: true }, delivered));
    const res = await retryWithProof(later.fetchImpl, request);
    expect(res.status).toBe(200);
    expect(later.seen).toEqual([
      { url: 'http://gw/p/demo/echo', method: 'POST', body: 'hi', payment: request.proof },
    ]);
  });

  it('gives up again with the same proof', async () => {
    const { request } = await givenUp();
    const later = server(retryable(502, 'upstream_error'));
    const err = await retryWithProof(later.fetchImpl, request, { maxRetries: 1, maxRetryDelayMs: 1 }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(UndeliveredPaymentError);
    expect(err.proof).toBe(request.proof);
    expect(later.seen).toHaveLength(2);
  });
});
