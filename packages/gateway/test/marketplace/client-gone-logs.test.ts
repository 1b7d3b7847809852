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
