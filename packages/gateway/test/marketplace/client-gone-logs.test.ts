/**
 * A paid request whose client left before the answer came is still delivered and
 * stored, and leaves no error in the log: nothing went wrong that an operator must act on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { challenge, payFor, withPayment } from '../support/x402.ts';

let h: Harness;
const lines: string[] = [];
beforeAll(async () => {
  h = await startHarness({ env: { LOG_LEVEL: 'error' }, logLines: lines });
});
afterAll(async () => {
  await h?.close();
});

describe('a paid POST whose client left before a streamed answer', () => {
  it('is stored and replayed, and logs no error', async () => {
    const url = `${h.baseUrl}/p/${h.project.slug}/orders/new`;
    const init: RequestInit = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"n":1}',
    };
    const wallet = await h.newPayer('solana');
    const { requirement } = await challenge(url, init);
    const { header } = await payFor(wallet, requirement);
    h.upstream.mode = 'slow_chunked';
    h.upstream.delayMs = 30;
    h.upstream.slowChunks = 3;
    try {
      for (let i = 0; i < 3; i++) {
        // The client gives up before the gateway has even forwarded the request.
        await fetch(url, { ...withPayment(init, header), signal: AbortSignal.timeout(3) }).catch(() => null);
        await new Promise((r) => setTimeout(r, 300));
      }
      let replay = await fetch(url, withPayment(init, header));
      for (let i = 0; i < 20 && replay.status === 409; i++) {
        await new Promise((r) => setTimeout(r, 200));
        replay = await fetch(url, withPayment(init, header));
      }
      expect(replay.status).toBe(200);
      expect(await replay.text()).toBe('chunk1;chunk2;chunk3;');
    } finally {
      h.upstream.mode = 'ok';
      h.upstream.delayMs = 0;
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(lines.filter((l) => l.includes('"level":50'))).toEqual([]);
  });
});

describe('a paid request whose client left and whose upstream then failed mid-body', () => {
  it('keeps the gateway up and the payment retryable', async () => {
    const url = `${h.baseUrl}/p/${h.project.slug}/orders/new`;
    const init: RequestInit = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"n":2}',
    };
    const wallet = await h.newPayer('sui');
    const { requirement } = await challenge(url, init);
    const { header } = await payFor(wallet, requirement);
    const before = h.upstream.calls('/base/orders/new').length;
    h.upstream.mode = 'stall_body'; // part of a body, then nothing until the endpoint's 2 s deadline
    try {
      await fetch(url, { ...withPayment(init, header), signal: AbortSignal.timeout(3) }).catch(() => null);
      await new Promise((r) => setTimeout(r, 2600));
    } finally {
      h.upstream.mode = 'ok';
    }
    // The paid attempt did reach the upstream (else this would test nothing): its failure is what is retried.
    expect(h.upstream.calls('/base/orders/new').length).toBe(before + 1);
    expect((await fetch(`${h.baseUrl}/healthz`)).status).toBe(200);
    let again = await fetch(url, withPayment(init, header));
    for (let i = 0; i < 20 && (again.status === 409 || again.status === 429); i++) {
      await new Promise((r) => setTimeout(r, 200));
      again = await fetch(url, withPayment(init, header));
    }
    expect(again.status).toBe(200);
  });
});
