/**
 * An upstream cannot speak for the gateway (DESIGN §4.9): the request id, the payment
 * receipt (v1 and v2 names), the v2 402 header and every `x-tollgate-*` header the
 * client sees are the gateway's own, whatever the origin answers. Driven end to end:
 * a real listening gateway in front of a real origin that sets all of them.
 */
import { randomBytes } from 'node:crypto';
import { decodePaymentReceipt } from '@tollgate/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishProject } from '../../src/marketplace/publish.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { challenge, payFor, withPayment } from '../support/x402.ts';
import { startUpstream, type Upstream } from './upstream.ts';

let h: Harness;
let origin: Upstream;
let base: string;

/** What a hostile origin answers: the gateway's headers, spelled in assorted cases. */
const SPOOFED: Array<[string, string]> = [
  ['X-Request-Id', 'req_spoofed-by-origin'],
  ['X-Payment-Response', 'forged-v1-receipt'],
  ['PAYMENT-RESPONSE', 'forged-v2-receipt'],
  ['Payment-Required', 'forged-v2-requirement'],
  ['X-Tollgate-Replay', 'true'],
  ['x-tollgate-not-retained', '1'],
  ['X-TOLLGATE-ANYTHING', 'forged'],
];

beforeAll(async () => {
  h = await startHarness({ env: { PLATFORM_FEE_MIN: '0' } }); // a price of 0 is then free
  origin = await startUpstream();
  origin.handle((_req, res) => {
    // Raw header lines keep the origin's spelling on the wire.
    const lines: string[] = ['content-type', 'application/json', 'x-ratelimit-remaining', '9'];
    for (const [name, value] of SPOOFED) lines.push(name, value);
    res.writeHead(200, lines).end('{"ok":true}');
  });
  const { project } = await publishProject(h.store, {
    slug: `spoof-${randomBytes(3).toString('hex')}`,
    name: 'Spoofing origin',
    description: 'sets the gateway headers itself',
    category: 'test',
    owner: { chain: 'solana', address: h.recipients.solana.provider },
    api: { name: 'spoofer', baseUrl: `${origin.base}/base` },
    endpoints: [
      { method: 'GET', path: 'free', price: '0', timeoutMs: 2000 },
      { method: 'GET', path: 'paid', price: '0.01', timeoutMs: 2000 },
    ],
    rails: [
      { chain: 'solana', network: h.config.chainNetwork, providerRecipient: h.recipients.solana.provider },
      { chain: 'sui', network: h.config.chainNetwork, providerRecipient: h.recipients.sui.provider },
    ],
  });
  base = `${h.baseUrl}/p/${project.slug}`;
});
afterAll(async () => {
  await origin?.close();
  await h?.close();
});

function expectNoSpoof(res: Response) {
  for (const [name] of SPOOFED) {
    if (['x-request-id', 'x-payment-response', 'x-tollgate-replay'].includes(name.toLowerCase())) continue;
    expect(res.headers.get(name), name).toBeNull();
  }
  expect(res.headers.get('x-ratelimit-remaining')).toBe('9');
}

describe("the origin's response headers", () => {
  it('cannot replace the request id or plant a receipt on a free call', async () => {
    const res = await fetch(`${base}/free`, { headers: { 'x-request-id': 'client-chosen-id' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    // The gateway's id: the one the client chose, which is also what the origin was sent.
    expect(res.headers.get('x-request-id')).toBe('client-chosen-id');
    expect(origin.seen.at(-1)?.headers['x-request-id']).toBe('client-chosen-id');
    expect(res.headers.get('x-payment-response')).toBeNull();
    expect(res.headers.get('x-tollgate-replay')).toBeNull();
    expectNoSpoof(res);

    const generated = await fetch(`${base}/free`);
    await generated.arrayBuffer();
    expect(generated.headers.get('x-request-id')).toMatch(/^req_[0-9a-f-]{36}$/);
    expect(generated.headers.get('x-request-id')).toBe(origin.seen.at(-1)?.headers['x-request-id']);
  });

  it('cannot forge the receipt of a paid call, nor mark its stored answer unreplayable', async () => {
    const url = `${base}/paid`;
    const wallet = await h.newPayer('solana');
    const { requirement } = await challenge(url);
    const { header, tx } = await payFor(wallet, requirement);

    const res = await fetch(url, withPayment({}, header));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(res.headers.get('x-request-id')).toBe(origin.seen.at(-1)?.headers['x-request-id']);
    expect(res.headers.get('x-request-id')).not.toBe('req_spoofed-by-origin');
    const receipt = decodePaymentReceipt(res.headers.get('x-payment-response') ?? '');
    expect(receipt).toMatchObject({ success: true, txHashOrDigest: tx });
    expect(res.headers.get('x-tollgate-replay')).toBeNull();
    expectNoSpoof(res);

    // The same proof again is a replay of the stored answer, not refused as "not retained".
    const calls = origin.seen.length;
    const replay = await fetch(url, withPayment({}, header));
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual({ ok: true });
    expect(replay.headers.get('x-tollgate-replay')).toBe('true');
    expect(decodePaymentReceipt(replay.headers.get('x-payment-response') ?? '')).toMatchObject({
      success: true,
      txHashOrDigest: tx,
    });
    expect(replay.headers.get('x-request-id')).not.toBe('req_spoofed-by-origin');
    expectNoSpoof(replay);
    expect(origin.seen.length).toBe(calls);
  });
});
