import { describe, expect, it } from 'vitest';
import { buildRequestHeaders } from '../proxy/forward-headers.ts';
import {
  canonicalPaymentContext,
  type PaymentContext,
  paymentContextHeaders,
  verifyPaymentContext,
} from './payment-context.ts';

const SECRET = 'origin-secret-key-123456';
const NOW = 1_790_000_000_000;
const context: PaymentContext = {
  payer: 'PayerAddr1111',
  chain: 'solana',
  network: 'mainnet',
  tx: '5sigSIG',
  amount: 22_000n,
  requirement: 'req.token',
};
const request = { method: 'POST', target: '/base/orders/new?ref=a%20b' };

/** Headers as the origin's Node server sees them: a lower-case record. */
function received(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < pairs.length; i += 2) out[pairs[i]!] = pairs[i + 1]!;
  return out;
}

const signed = () => received(paymentContextHeaders(context, request, { secret: SECRET, nowMs: NOW }));

describe('payment context headers', () => {
  it('carry the payer, chain, network, tx, decimal amount, requirement, timestamp and a v1 signature', () => {
    expect(signed()).toEqual({
      'x-tollgate-payer': 'PayerAddr1111',
      'x-tollgate-chain': 'solana',
      'x-tollgate-network': 'mainnet',
      'x-tollgate-tx': '5sigSIG',
      'x-tollgate-amount': '0.022',
      'x-tollgate-requirement': 'req.token',
      'x-tollgate-timestamp': String(NOW / 1000),
      'x-tollgate-signature': expect.stringMatching(/^v1=[0-9a-f]{64}$/),
    });
  });

  it('sign one value per line, method and target included', () => {
    const h = signed();
    expect(
      canonicalPaymentContext(
        {
          payer: h['x-tollgate-payer']!,
          chain: h['x-tollgate-chain']!,
          network: h['x-tollgate-network']!,
          tx: h['x-tollgate-tx']!,
          amount: h['x-tollgate-amount']!,
          requirement: h['x-tollgate-requirement']!,
          timestamp: h['x-tollgate-timestamp']!,
        },
        { method: 'post', target: request.target },
      ),
    ).toBe(
      `tollgate-payment-context/v1\n${NOW / 1000}\nPOST\n/base/orders/new?ref=a%20b\nsolana\nmainnet\n5sigSIG\nPayerAddr1111\n0.022\nreq.token`,
    );
  });

  it('verify with the secret, the method and the target', () => {
    const v = verifyPaymentContext(signed(), request, SECRET, { nowMs: NOW + 1000 });
    expect(v).toEqual({
      ok: true,
      context: {
        payer: 'PayerAddr1111',
        chain: 'solana',
        network: 'mainnet',
        tx: '5sigSIG',
        amount: '0.022',
        requirement: 'req.token',
        timestamp: NOW / 1000,
      },
    });
  });

  it('do not verify when any value, the method, the target or the secret differs', () => {
    const opts = { nowMs: NOW };
    for (const name of [
      'x-tollgate-payer',
      'x-tollgate-chain',
      'x-tollgate-network',
      'x-tollgate-tx',
      'x-tollgate-amount',
      'x-tollgate-requirement',
      'x-tollgate-timestamp',
    ]) {
      const h = { ...signed(), [name]: `${signed()[name]}0` };
      expect({ name, v: verifyPaymentContext(h, request, SECRET, opts) }).toEqual({
        name,
        v: { ok: false, reason: 'bad_signature' },
      });
    }
    expect(verifyPaymentContext(signed(), { ...request, method: 'GET' }, SECRET, opts).ok).toBe(false);
    expect(verifyPaymentContext(signed(), { ...request, target: '/base/orders/new' }, SECRET, opts).ok).toBe(
      false,
    );
    expect(verifyPaymentContext(signed(), request, `${SECRET}x`, opts).ok).toBe(false);
    const h = signed();
    expect(
      verifyPaymentContext(
        { ...h, 'x-tollgate-signature': h['x-tollgate-signature']!.slice(0, -1) },
        request,
        SECRET,
        opts,
      ),
    ).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('do not verify without a signature or a value, or with a timestamp outside the window', () => {
    const { 'x-tollgate-signature': _s, ...unsigned } = signed();
    expect(verifyPaymentContext(unsigned, request, SECRET, { nowMs: NOW })).toEqual({
      ok: false,
      reason: 'missing_header',
    });
    const { 'x-tollgate-tx': _t, ...noTx } = signed();
    expect(verifyPaymentContext(noTx, request, SECRET, { nowMs: NOW }).ok).toBe(false);
    expect(verifyPaymentContext(signed(), request, SECRET, { nowMs: NOW + 301_000 })).toEqual({
      ok: false,
      reason: 'stale_timestamp',
    });
    expect(verifyPaymentContext(signed(), request, SECRET, { nowMs: NOW - 301_000 }).ok).toBe(false);
    expect(verifyPaymentContext(signed(), request, SECRET, { nowMs: NOW + 30_000, maxAgeSec: 10 }).ok).toBe(
      false,
    );
  });

  it('are sent unsigned when the API has no origin secret', () => {
    const h = received(paymentContextHeaders(context, request, { secret: null, nowMs: NOW }));
    expect(h['x-tollgate-payer']).toBe('PayerAddr1111');
    expect(h['x-tollgate-signature']).toBeUndefined();
  });
});

describe('forwarded request headers', () => {
  const ctx = {
    clientIp: '1.2.3.4',
    forwardedProto: 'https',
    forwardedHost: 'gw.example',
    requestId: 'req-1',
    userAgent: undefined,
    hasBody: false,
    auth: { type: 'none' } as const,
  };

  it("drop every x-tollgate-* header the client sent, whatever its case, and keep the gateway's", () => {
    const out = received(
      buildRequestHeaders(
        {
          'x-tollgate-payer': 'forged',
          'X-Tollgate-Signature': 'v1=forged',
          'x-tollgate-anything': '1',
          accept: 'application/json',
        },
        { ...ctx, gatewayHeaders: ['x-tollgate-payer', 'real'] },
      ),
    );
    expect(out['x-tollgate-payer']).toBe('real');
    expect(Object.keys(out).filter((k) => k.toLowerCase().startsWith('x-tollgate-'))).toEqual([
      'x-tollgate-payer',
    ]);
    expect(out['accept']).toBe('application/json');

    const free = buildRequestHeaders({ 'x-tollgate-payer': 'forged' }, ctx);
    expect(free.filter((v) => v.toLowerCase().startsWith('x-tollgate-'))).toEqual([]);
  });
});
