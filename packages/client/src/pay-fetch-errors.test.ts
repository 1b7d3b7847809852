/**
 * payFetch under an SDK that turns every error its fetch throws into "Connection error."
 * (the `openai` SDK): with `errorsAsResponses` (on by itself for such SDKs) its own
 * refusals come back as Responses with an OpenAI error envelope, so the SDK raises an
 * API error that shows the message and the code. And the paid retries understand the
 * envelope the gateway sends on its OpenAI-style routes.
 */
import {
  type AcceptOption,
  decodePaymentProof,
  type PaymentRequirement,
  ProtocolError,
} from '@tollgate/protocol';
import { describe, expect, it } from 'vitest';
import { UndeliveredPaymentError } from './paid-retry.ts';
import { payFetch } from './pay-fetch.ts';
import type { PaymentWallet } from './wallets/wallet.ts';

const requirement = (overrides: Partial<PaymentRequirement> = {}): PaymentRequirement => ({
  error: 'payment_required',
  x402Version: 1,
  scheme: 'exact',
  resource: 'POST /v1/chat/completions',
  description: 'chat',
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
      splits: [{ recipientType: 'platform', payTo: 'F', amount: '0.011' }],
    },
  ],
  ...overrides,
});

function wallet(pay?: () => Promise<string>) {
  const paid: AcceptOption[] = [];
  const w: PaymentWallet & { paid: AcceptOption[] } = {
    chain: 'solana',
    address: 'PayerSolana1111111111111111111111111111111',
    paid,
    async pay(option) {
      paid.push(option);
      return pay ? pay() : '5'.repeat(88);
    },
    async chainIdentity() {
      return 'a-sandbox-chain';
    },
  };
  return w;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

function server(...answers: (() => Response)[]) {
  const seen: { payment: string | null; stainless: string | null }[] = [];
  const fetchImpl = async (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push({ payment: req.headers.get('x-payment'), stainless: req.headers.get('x-stainless-lang') });
    return answers[Math.min(seen.length - 1, answers.length - 1)]!();
  };
  return { fetchImpl, seen };
}

/** How the openai SDK calls its fetch: with its `X-Stainless-*` headers. */
const sdkInit: RequestInit = {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-stainless-lang': 'js' },
  body: '{"model":"m"}',
};

// biome-ignore lint/suspicious/noExplicitAny: reading bodies loosely
async function body(res: Response): Promise<any> {
  return res.json();
}

describe('payFetch errorsAsResponses', () => {
  it('answers a refusal to pay with a 402 in the OpenAI envelope for an SDK, paying nothing', async () => {
    const w = wallet();
    const pay = payFetch(server(() => json(402, requirement())).fetchImpl, {
      wallets: [w],
      maxPerRequest: '0.01',
    });
    const res = await pay('http://gw/v1/chat/completions', sdkInit);
    expect(res.status).toBe(402);
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await body(res)).toEqual({
      error: {
        message: 'price 0.011 USDC exceeds the per-request limit 0.01 USDC',
        type: 'payment_error',
        code: 'payment_limit_exceeded',
        param: null,
      },
    });
    expect(w.paid).toHaveLength(0);
  });

  it('keeps throwing for a plain fetch caller, and when turned off', async () => {
    const s = server(() => json(402, requirement()));
    const capped = { wallets: [wallet()], maxPerRequest: '0.01' };
    await expect(payFetch(s.fetchImpl, capped)('http://gw/x')).rejects.toBeInstanceOf(ProtocolError);
    await expect(
      payFetch(s.fetchImpl, { ...capped, errorsAsResponses: false })('http://gw/x', sdkInit),
    ).rejects.toMatchObject({ code: 'payment_limit_exceeded' });
    const forced = await payFetch(s.fetchImpl, { ...capped, errorsAsResponses: true })('http://gw/x');
    expect((await body(forced)).error.code).toBe('payment_limit_exceeded');
  });

  it.each([
    ['unsupported_chain', requirement({ accepts: [{ ...requirement().accepts[0]!, chain: 'sui' }] })],
    ['quote_expired', requirement({ expiresAt: new Date(Date.now() - 1000).toISOString() })],
  ])('answers %s the same way', async (code, req) => {
    const res = await payFetch(server(() => json(402, req)).fetchImpl, { wallets: [wallet()] })(
      'http://gw/x',
      sdkInit,
    );
    expect(res.status).toBe(402);
    expect((await body(res)).error).toMatchObject({ code, type: 'payment_error' });
  });

  it('answers a wallet that cannot pay with 402 payment_failed and its message', async () => {
    const w = wallet(async () => {
      throw new Error('insufficient USDC balance');
    });
    const res = await payFetch(server(() => json(402, requirement())).fetchImpl, { wallets: [w] })(
      'http://gw/x',
      sdkInit,
    );
    expect(res.status).toBe(402);
    expect((await body(res)).error).toMatchObject({
      code: 'payment_failed',
      type: 'payment_error',
      message: 'the payment could not be made: insufficient USDC balance',
    });
  });

  it('answers paid-but-undelivered with the last status, the gateway code and the proof', async () => {
    const s = server(
      () => json(402, requirement()),
      () =>
        json(502, {
          error: {
            message: 'the model upstream failed',
            type: 'upstream_error',
            code: 'upstream_error',
            retryable: true,
          },
          retryable: true,
        }),
    );
    const res = await payFetch(s.fetchImpl, { wallets: [wallet()], maxRetries: 1, maxRetryDelayMs: 1 })(
      'http://gw/v1/chat/completions',
      sdkInit,
    );
    expect(res.status).toBe(502);
    expect(res.headers.get('x-should-retry')).toBe('false');
    const { error } = await body(res);
    expect(error).toMatchObject({
      code: 'payment_failed',
      type: 'payment_error',
      gatewayError: 'upstream_error',
      retryable: true,
      proof: s.seen[1]!.payment,
    });
    expect(error.message).toMatch(
      /^paid, but not delivered after 2 attempt\(s\): the gateway still answers 502 upstream_error \(the model upstream failed\)/,
    );
    expect(decodePaymentProof(error.proof).nonce).toBe('nonce-1');
    expect(s.seen).toHaveLength(3);
  });

  it('answers an unreachable gateway after paying with 502 payment_failed and the proof', async () => {
    let calls = 0;
    const fetchImpl = async () => {
      if (++calls === 1) return json(402, requirement());
      throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') });
    };
    const res = await payFetch(fetchImpl, { wallets: [wallet()], maxRetries: 0, errorsAsResponses: true })(
      'http://gw/x',
    );
    expect(res.status).toBe(502);
    expect((await body(res)).error).toMatchObject({ code: 'payment_failed', retryable: true });
  });

  it('turns a refused proof (a 402 after paying) into the envelope with the reason', async () => {
    const s = server(
      () => json(402, requirement()),
      () =>
        json(402, {
          ...requirement({ nonce: 'n2' }),
          reason: 'amount_mismatch',
          message: 'a split recipient received less than its amount',
        }),
    );
    const w = wallet();
    const res = await payFetch(s.fetchImpl, { wallets: [w] })('http://gw/x', sdkInit);
    expect(res.status).toBe(402);
    const { error } = await body(res);
    expect(error).toMatchObject({
      code: 'payment_required',
      type: 'payment_error',
      reason: 'amount_mismatch',
      proof: s.seen[1]!.payment,
    });
    expect(error.message).toBe(
      'the gateway refused the payment proof (amount_mismatch): a split recipient received less than its amount',
    );
    expect(w.paid).toHaveLength(1);
  });

  it("marks the gateway's final error after paying so the SDK does not retry it (and pay again)", async () => {
    const s = server(
      () => json(402, requirement()),
      () =>
        json(409, { error: { code: 'conflict', message: 'history changed', type: 'invalid_request_error' } }),
    );
    const res = await payFetch(s.fetchImpl, { wallets: [wallet()] })('http://gw/x', sdkInit);
    expect(res.status).toBe(409);
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect((await body(res)).error.message).toBe('history changed');
    // Unpaid answers are the gateway's as they are: a retry of those costs nothing.
    const free = await payFetch(server(() => json(503, { error: 'x' })).fetchImpl, { wallets: [wallet()] })(
      'http://gw/x',
      sdkInit,
    );
    expect(free.headers.get('x-should-retry')).toBeNull();
  });

  it('still throws a network failure before anything was paid, and an abort', async () => {
    const down = async () => {
      throw new TypeError('fetch failed');
    };
    await expect(payFetch(down, { wallets: [wallet()] })('http://gw/x', sdkInit)).rejects.toThrow(
      'fetch failed',
    );
    const ac = new AbortController();
    const w = wallet(async () => {
      ac.abort(new Error('stop'));
      throw new Error('aborted');
    });
    await expect(
      payFetch(server(() => json(402, requirement())).fetchImpl, { wallets: [w] })('http://gw/x', {
        ...sdkInit,
        signal: ac.signal,
      }),
    ).rejects.toThrow('aborted'); // thrown as it was: the SDK sees its own signal aborted
  });
});

describe('paid retries read the OpenAI envelope', () => {
  it('resends the same proof while error.retryable is true, or error.code is payment_pending', async () => {
    const s = server(
      () => json(402, requirement()),
      () => json(502, { error: { code: 'upstream_error', type: 'upstream_error', retryable: true } }),
      () => json(409, { error: { code: 'payment_pending', type: 'payment_error' } }, { 'retry-after': '0' }),
      () => json(200, { ok: true }),
    );
    const w = wallet();
    const res = await payFetch(s.fetchImpl, { wallets: [w], maxRetryDelayMs: 1 })('http://gw/x');
    expect(res.status).toBe(200);
    expect(w.paid).toHaveLength(1);
    expect(s.seen).toHaveLength(4);
  });

  it('names the code from the envelope when it gives up', async () => {
    const s = server(
      () => json(402, requirement()),
      () => json(503, { error: { code: 'service_unavailable', message: 'db down', retryable: true } }),
    );
    const err = await payFetch(s.fetchImpl, { wallets: [wallet()], maxRetries: 0 })('http://gw/x').catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(UndeliveredPaymentError);
    expect(err.gatewayError).toBe('service_unavailable');
    expect(err.message).toContain('503 service_unavailable (db down)');
  });
});
