/**
 * Logs (issue 12): one structured line per request — a 402, a refused or malformed
 * proof, a paid delivery (v1 and v2), a replay, an upstream failure — with status,
 * code, reason, route family, project and endpoint, chain, tx, payer, amount in atomic
 * units, redemption, duration and request id; settlement failures by redemption id;
 * and never a secret: not the X-PAYMENT or PAYMENT-SIGNATURE value, the origin secret,
 * the operator token or a query string.
 */
import { suiExactV2PaymentSignature, suiWallet } from '@tollgate/client';
import { decodePaymentRequired } from '@tollgate/protocol';
import { newSuiKey } from '@tollgate/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness, UPSTREAM_KEY } from '../support/gateway-harness.ts';
import { challenge, payFor, withPayment } from '../support/x402.ts';

type Line = Record<string, unknown> & { msg: string; level: number };

let h: Harness;
let url: string;
const lines: string[] = [];
/** Every secret a test sent or the gateway holds: none may appear in any line. */
const secrets: string[] = [];
const TOTAL = '11000'; // items: 0.01 USDC + 10 % fee, atomic units

beforeAll(async () => {
  h = await startHarness({ env: { LOG_LEVEL: 'info' }, logLines: lines });
  // Opted in to x402 v2, so a PAYMENT-SIGNATURE can pay too.
  await h.store.projects.update(h.project.id, { x402Exact: true });
  h.deps.catalog.invalidate();
  url = `${h.baseUrl}/p/${h.project.slug}/items`;
  secrets.push(UPSTREAM_KEY, h.config.adminToken!, h.config.secret!);
});
afterAll(async () => {
  await h?.close();
});

const parsed = (): Line[] => lines.map((l) => JSON.parse(l) as Line);

/** The access-log line of a response (written once the response is done: wait for it). */
async function lineOf(res: Response): Promise<Line> {
  const id = res.headers.get('x-request-id');
  for (let i = 0; i < 100; i++) {
    const line = parsed().find((l) => l.msg === 'request' && l.reqId === id);
    if (line) return line;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no access-log line for ${id}`);
}

describe('the access log', () => {
  it('has a line for a 402 with route, project, endpoint, code, duration and request id', async () => {
    const { res } = await challenge(`${url}?apikey=query-secret-123`);
    const line = await lineOf(res);
    expect(line).toMatchObject({
      level: 30,
      msg: 'request',
      reqId: res.headers.get('x-request-id'),
      method: 'GET',
      path: `/p/${h.project.slug}/items`,
      route: 'marketplace',
      status: 402,
      code: 'payment_required',
      project: h.project.slug,
      endpoint: h.endpoints.items.id,
    });
    expect(typeof line.ms).toBe('number');
    expect(line.tx).toBeUndefined();
    secrets.push('query-secret-123');
  });

  it('has a line for a malformed X-PAYMENT (400 invalid_payment_header) without the header', async () => {
    const garbage = 'bm90LWEtcHJvb2Y-garbage-proof-value';
    secrets.push(garbage);
    const res = await fetch(url, { headers: { 'x-payment': garbage } });
    expect(res.status).toBe(400);
    expect(await lineOf(res)).toMatchObject({
      level: 30,
      status: 400,
      code: 'invalid_payment_header',
      format: 'v1',
      route: 'marketplace',
    });
  });

  it('logs a paid delivery at info with chain, tx, payer, amount, redemption; its replay too', async () => {
    const wallet = await h.newPayer('solana');
    const { requirement } = await challenge(url);
    const { header, tx } = await payFor(wallet, requirement);
    secrets.push(header);
    const res = await fetch(url, withPayment({}, header));
    expect(res.status).toBe(200);
    const line = await lineOf(res);
    expect(line).toMatchObject({
      level: 30,
      status: 200,
      route: 'marketplace',
      project: h.project.slug,
      endpoint: h.endpoints.items.id,
      format: 'v1',
      chain: 'solana',
      tx,
      payer: wallet.address,
      amount: TOTAL,
      outcome: 'delivered',
      redemption: expect.any(String),
    });
    expect(line.code).toBeUndefined();

    const again = await fetch(url, withPayment({}, header));
    expect(again.headers.get('x-tollgate-replay')).toBe('true');
    expect(await lineOf(again)).toMatchObject({
      status: 200,
      tx,
      payer: wallet.address,
      amount: TOTAL,
      outcome: 'replayed',
      redemption: line.redemption,
    });
  });

  it('gives the reason of a refused proof (402 with reason)', async () => {
    const wallet = await h.newPayer('solana');
    const { requirement } = await challenge(url);
    const { header, tx } = await payFor(wallet, requirement);
    secrets.push(header);
    // The proof was made for another request (another query string).
    const res = await fetch(`${url}?other=1`, withPayment({}, header));
    expect(res.status).toBe(402);
    expect(await lineOf(res)).toMatchObject({
      status: 402,
      code: 'payment_required',
      reason: 'request_mismatch',
      format: 'v1',
    });
    // Used for its own request, it still works: nothing was burnt.
    const ok = await fetch(url, withPayment({}, header));
    expect(ok.status).toBe(200);
    expect(await lineOf(ok)).toMatchObject({ tx, outcome: 'delivered' });
  });

  it('logs an upstream failure of a paid request: the access line and the settlement line by redemption id', async () => {
    const wallet = await h.newPayer('solana');
    const { requirement } = await challenge(url);
    const { header, tx } = await payFor(wallet, requirement);
    secrets.push(header);
    h.upstream.mode = 'fail500';
    let res: Response;
    try {
      res = await fetch(url, withPayment({}, header));
    } finally {
      h.upstream.mode = 'ok';
    }
    expect(res.status).toBe(502);
    const line = await lineOf(res);
    expect(line).toMatchObject({
      level: 30,
      status: 502,
      code: 'upstream_error',
      chain: 'solana',
      tx,
      outcome: 'failed',
      reason: 'status_500',
      redemption: expect.any(String),
    });
    const settlement = parsed().find(
      (l) => l.msg === 'paid request failed upstream' && l.redemption === line.redemption,
    );
    expect(settlement).toMatchObject({ level: 40, chain: 'solana', tx, reason: 'status_500' });
    // The payment stays with its request: the retry delivers.
    const retry = await fetch(url, withPayment({}, header));
    expect(retry.status).toBe(200);
    expect(await lineOf(retry)).toMatchObject({ outcome: 'delivered', redemption: line.redemption });
  });

  it('logs a v2 (PAYMENT-SIGNATURE) delivery with format v2 and the amount, never the signature', async () => {
    const key = newSuiKey();
    h.chains.sui.faucet(key.address, 1_000_000n);
    const wallet = suiWallet({ secretKey: key.secretKey, rpcUrl: h.chains.sui.url });
    const offer = await fetch(url);
    const required = decodePaymentRequired(offer.headers.get('payment-required'));
    const entry = required.accepts.find((a) => a.network.startsWith('sui:'))!;
    const { header, digest } = await suiExactV2PaymentSignature(wallet, entry, {
      resource: required.resource,
    });
    secrets.push(header);
    const res = await fetch(url, { headers: { 'payment-signature': header } });
    expect(res.status).toBe(200);
    expect(await lineOf(res)).toMatchObject({
      status: 200,
      format: 'v2',
      chain: 'sui',
      tx: digest,
      payer: wallet.address.toLowerCase(),
      amount: TOTAL,
      outcome: 'delivered',
    });
  });

  it('has a line for any other 4xx, with its code and a bounded route family', async () => {
    const res = await fetch(`${h.baseUrl}/v1/no-such-thing-${Date.now()}`);
    expect(res.status).toBe(404);
    expect(await lineOf(res)).toMatchObject({
      level: 30,
      status: 404,
      code: 'not_found',
      route: 'unmatched',
    });
    const bad = await fetch(`${h.baseUrl}/v1/projects`, {
      headers: { authorization: `Bearer ${h.config.adminToken}x` },
    });
    expect(bad.status).toBe(401);
    expect(await lineOf(bad)).toMatchObject({ status: 401, code: 'unauthorized', route: 'projects' });
  });

  it('writes no secret in any line', async () => {
    expect(lines.length).toBeGreaterThan(10);
    const all = lines.join('\n');
    for (const secret of secrets) expect(all).not.toContain(secret);
    // Nor a header that carries one, under any name.
    expect(all).not.toMatch(/"x-payment"|"payment-signature"|"authorization"|x-api-key/i);
  });
});
