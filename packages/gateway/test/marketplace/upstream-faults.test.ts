/**
 * Paid means delivered or retriable: when the upstream fails, hangs, resets or cuts
 * its body, the same proof works again once it recovers; a redirect is never followed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import type { UpstreamMode } from '../support/test-upstream.ts';
import { challenge, payFor, withPayment } from '../support/x402.ts';

let h: Harness;
let url: string;
beforeAll(async () => {
  h = await startHarness({ env: { TOLLGATE_LEASE_MS: '2000' } });
  url = `${h.baseUrl}/p/${h.project.slug}/items`;
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => {
  h.upstream.mode = 'ok';
});

const cases: [UpstreamMode, number, string][] = [
  ['fail500', 502, 'upstream_error'],
  ['hang', 504, 'upstream_timeout'],
  ['reset', 502, 'upstream_error'],
];

describe('upstream faults after payment', () => {
  for (const [mode, status, code] of cases) {
    it(`keeps the payment redeemable when the upstream ${mode}s, and delivers on retry`, async () => {
      const wallet = await h.newPayer('solana');
      const { requirement } = await challenge(url);
      const { header } = await payFor(wallet, requirement);
      h.upstream.mode = mode;
      const failed = await fetch(url, withPayment({}, header));
      expect(failed.status).toBe(status);
      expect(await failed.json()).toMatchObject({ error: code, retryable: true });
      h.upstream.mode = 'ok';
      const retried = await fetch(url, withPayment({}, header));
      expect(retried.status).toBe(200);
      expect(await retried.json()).toMatchObject({ ok: true });
    });
  }

  it('gives the payment back when the upstream cuts the body mid-stream', async () => {
    const wallet = await h.newPayer('sui');
    const { requirement } = await challenge(url);
    const { header } = await payFor(wallet, requirement);
    h.upstream.mode = 'stall_body';
    const cut = await fetch(url, withPayment({}, header))
      .then(
        async (r) => {
          await r.text();
          return 'complete';
        },
        () => 'failed',
      )
      .catch(() => 'failed');
    expect(cut).toBe('failed');
    h.upstream.mode = 'ok';
    // The lease was released when the stream failed; the same proof now delivers.
    let retried = await fetch(url, withPayment({}, header));
    for (let i = 0; i < 20 && retried.status === 409; i++) {
      await new Promise((r) => setTimeout(r, 200));
      retried = await fetch(url, withPayment({}, header));
    }
    expect(retried.status).toBe(200);
  });

  it('streams a paid answer of unknown length, stores it, and replays the same bytes', async () => {
    const wallet = await h.newPayer('sui');
    const { requirement } = await challenge(url);
    const { header } = await payFor(wallet, requirement);
    h.upstream.mode = 'chunked';
    const before = h.upstream.calls().length;
    const first = await fetch(url, withPayment({}, header));
    expect(first.status).toBe(200);
    expect(await first.text()).toBe('first part;second part');
    let replay = await fetch(url, withPayment({}, header));
    // Settling happens as the stream ends; a retry in that instant may see it in progress.
    for (let i = 0; i < 20 && replay.status === 409; i++) {
      await new Promise((r) => setTimeout(r, 50));
      replay = await fetch(url, withPayment({}, header));
    }
    expect(replay.status).toBe(200);
    expect(replay.headers.get('x-tollgate-replay')).toBe('true');
    expect(await replay.text()).toBe('first part;second part');
    expect(h.upstream.calls().length).toBe(before + 1);
  });

  it('gives the payment back at once when the gateway itself fails after claiming it', async () => {
    const wallet = await h.newPayer('solana');
    const { requirement } = await challenge(url);
    const { header, tx } = await payFor(wallet, requirement);
    const api = (await h.store.apis.list(h.project.id))[0]!;
    // A sealed origin secret that no longer opens (e.g. a lost key): forwarding throws.
    await h.store.apis.update(h.project.id, api.id, { authSecretEnc: 'v1.deadbeef.AAAA.AAAA' });
    h.deps.catalog.invalidate(h.project.slug);
    try {
      expect((await fetch(url, withPayment({}, header))).status).toBe(500);
      expect((await h.store.redemptions.byTx('solana', 'localnet', tx))?.state).toBe('retryable');
    } finally {
      await h.store.apis.update(h.project.id, api.id, { authSecretEnc: api.authSecretEnc });
      h.deps.catalog.invalidate(h.project.slug);
    }
    expect((await fetch(url, withPayment({}, header))).status).toBe(200);
  });

  it('returns a redirect as it is and never follows it; the payment counts as delivered', async () => {
    const wallet = await h.newPayer('solana');
    const { requirement } = await challenge(url);
    const { header } = await payFor(wallet, requirement);
    h.upstream.mode = 'redirect';
    const before = h.upstream.calls().length;
    const res = await fetch(url, { ...withPayment({}, header), redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('http://127.0.0.1:1/elsewhere');
    expect(h.upstream.calls().length).toBe(before + 1);
    const replay = await fetch(url, { ...withPayment({}, header), redirect: 'manual' });
    expect(replay.status).toBe(302);
    expect(replay.headers.get('x-tollgate-replay')).toBe('true');
  });

  it('does not count callers that hang up as upstream failures', async () => {
    const wallet = await h.newPayer('solana', '20');
    h.upstream.mode = 'hang';
    for (let i = 0; i < 6; i++) {
      const { requirement } = await challenge(url);
      const { header } = await payFor(wallet, requirement);
      const ctrl = new AbortController();
      setTimeout(() => ctrl.abort(), 150);
      await expect(fetch(url, { ...withPayment({}, header), signal: ctrl.signal })).rejects.toThrow();
    }
    h.upstream.mode = 'ok';
    // Still healthy: an unpaid request gets a 402, not 503.
    expect((await fetch(url)).status).toBe(402);
  });

  it('marks an endpoint unavailable after repeated failures and answers 503, never 402', async () => {
    h.upstream.mode = 'fail500';
    // Unpaid requests to the free-of-charge path do not reach the upstream, so use paid ones.
    const wallet = await h.newPayer('solana', '20');
    for (let i = 0; i < 5; i++) {
      const { requirement } = await challenge(url);
      const { header } = await payFor(wallet, requirement);
      expect((await fetch(url, withPayment({}, header))).status).toBe(502);
    }
    const res = await fetch(url);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: 'endpoint_unavailable', reason: 'unhealthy' });
    h.deps.health.recordSuccess(h.endpoints.items.id);
  });
});
