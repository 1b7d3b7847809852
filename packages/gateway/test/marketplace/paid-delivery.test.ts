/**
 * Paid means delivered exactly once (DESIGN §4.5), whatever the client, the upstream
 * and the endpoint's state do: a client that hangs up still gets its answer stored,
 * a slow upstream keeps its lease, a paid proof beats health and replays beat every
 * availability check, one proof retries at most once per Retry-After window and counts
 * once toward health, and 408/429 are not deliveries.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { challenge, payFor, withPayment } from '../support/x402.ts';

let h: Harness;
let url: string;
const path = () => `/base/items`;

beforeAll(async () => {
  // A short lease, so a slow upstream (1.8 s, under the endpoint's 2 s timeout) outlives it.
  h = await startHarness({ env: { TOLLGATE_LEASE_MS: '1000', TOLLGATE_PAID_RETRY_AFTER_SEC: '1' } });
  url = `${h.baseUrl}/p/${h.project.slug}/items`;
});
afterAll(async () => {
  await h?.close();
});
beforeEach(async () => {
  h.upstream.mode = 'ok';
  h.upstream.delayMs = 0;
  h.deps.health.recordSuccess(h.endpoints.items.id);
  await h.store.endpoints.update(h.project.id, h.endpoints.items.id, { enabled: true });
  h.deps.catalog.invalidate();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function paidHeader(chain: 'solana' | 'sui' = 'solana'): Promise<string> {
  const wallet = await h.newPayer(chain);
  const { requirement } = await challenge(url);
  return (await payFor(wallet, requirement)).header;
}

/** Sends the proof, waiting out 409 in-progress answers and Retry-After (bounded). */
async function sendUntilSettled(header: string): Promise<Response> {
  for (let i = 0; ; i++) {
    const res = await fetch(url, withPayment({}, header));
    if (i >= 30 || (res.status !== 409 && res.status !== 429)) return res;
    const wait = Number(res.headers.get('retry-after') ?? '0.2');
    await res.arrayBuffer();
    await sleep(Math.max(200, wait * 1000));
  }
}

describe('a client that hangs up', () => {
  for (const chain of ['solana', 'sui'] as const) {
    it(`still gets its ${chain} payment delivered once: the answer is stored and replayed`, async () => {
      const header = await paidHeader(chain);
      h.upstream.delayMs = 400;
      const before = h.upstream.calls(path()).length;
      const aborted = await fetch(url, { ...withPayment({}, header), signal: AbortSignal.timeout(100) }).then(
        () => 'answered',
        () => 'aborted',
      );
      expect(aborted).toBe('aborted');
      h.upstream.delayMs = 0;
      const retried = await sendUntilSettled(header);
      expect(retried.status).toBe(200);
      expect(retried.headers.get('x-tollgate-replay')).toBe('true');
      expect(h.upstream.calls(path()).length).toBe(before + 1);
    });
  }

  it('that leaves a streamed answer midway still gets it stored and replayed, upstream called once', async () => {
    const header = await paidHeader('sui');
    h.upstream.mode = 'slow_chunked';
    h.upstream.delayMs = 100;
    h.upstream.slowChunks = 5;
    const before = h.upstream.calls(path()).length;
    const ctrl = new AbortController();
    const res = await fetch(url, { ...withPayment({}, header), signal: ctrl.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    ctrl.abort();
    await sleep(50);
    h.upstream.mode = 'ok';
    const retried = await sendUntilSettled(header);
    expect(retried.status).toBe(200);
    expect(await retried.text()).toBe('chunk1;chunk2;chunk3;chunk4;chunk5;');
    expect(h.upstream.calls(path()).length).toBe(before + 1);
  });
});

describe('a slow upstream', () => {
  it('keeps its lease past TOLLGATE_LEASE_MS: a retry meanwhile is in progress, the upstream runs once', async () => {
    const header = await paidHeader('solana');
    h.upstream.delayMs = 1800;
    const before = h.upstream.calls(path()).length;
    const first = fetch(url, withPayment({}, header));
    await sleep(1400);
    const meanwhile = await fetch(url, withPayment({}, header));
    expect(meanwhile.status).toBe(409);
    expect(await meanwhile.json()).toMatchObject({ error: 'payment_in_progress', retryable: true });
    expect((await first).status).toBe(200);
    expect(h.upstream.calls(path()).length).toBe(before + 1);
  });
});

describe('availability and a paid proof', () => {
  it('a paid proof to a disabled endpoint is a retryable 503 that keeps the payment', async () => {
    const header = await paidHeader('solana');
    await h.store.endpoints.update(h.project.id, h.endpoints.items.id, { enabled: false });
    h.deps.catalog.invalidate();
    const res = await fetch(url, withPayment({}, header));
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      error: 'endpoint_unavailable',
      retryable: true,
      reason: 'disabled',
    });
    await h.store.endpoints.update(h.project.id, h.endpoints.items.id, { enabled: true });
    h.deps.catalog.invalidate();
    expect((await fetch(url, withPayment({}, header))).status).toBe(200);
  });

  it('a delivered proof replays even when the endpoint is disabled or unhealthy', async () => {
    const header = await paidHeader('sui');
    expect((await fetch(url, withPayment({}, header))).status).toBe(200);
    for (let i = 0; i < 5; i++) h.deps.health.recordFailure(h.endpoints.items.id);
    expect((await fetch(url)).status).toBe(503); // no new quotes while unhealthy
    const unhealthy = await fetch(url, withPayment({}, header));
    expect(unhealthy.status).toBe(200);
    expect(unhealthy.headers.get('x-tollgate-replay')).toBe('true');
    await h.store.endpoints.update(h.project.id, h.endpoints.items.id, { enabled: false });
    h.deps.catalog.invalidate();
    const disabled = await fetch(url, withPayment({}, header));
    expect(disabled.status).toBe(200);
    expect(disabled.headers.get('x-tollgate-replay')).toBe('true');
  });

  it('a paid, undelivered proof gets an upstream attempt while health says unhealthy', async () => {
    const header = await paidHeader('solana');
    for (let i = 0; i < 5; i++) h.deps.health.recordFailure(h.endpoints.items.id);
    expect((await fetch(url)).status).toBe(503);
    const res = await fetch(url, withPayment({}, header));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true });
  });
});

describe('one proof and endpoint health', () => {
  it('retries a failing proof at most once per Retry-After window, and counts its failures once', async () => {
    const header = await paidHeader('sui');
    h.upstream.mode = 'fail500';
    const before = h.upstream.calls(path()).length;
    const first = await fetch(url, withPayment({}, header));
    expect(first.status).toBe(502);
    expect(first.headers.get('retry-after')).toBe('1');
    // At once again: refused without calling the upstream.
    const again = await fetch(url, withPayment({}, header));
    expect(again.status).toBe(429);
    expect(await again.json()).toMatchObject({
      error: 'rate_limited',
      reason: 'retry_budget',
      retryable: true,
    });
    expect(h.upstream.calls(path()).length).toBe(before + 1);
    // Six more failed attempts, each after its window: the endpoint stays healthy (threshold 5).
    for (let i = 0; i < 6; i++) {
      await sleep(1050);
      expect((await fetch(url, withPayment({}, header))).status).toBe(502);
    }
    expect(h.upstream.calls(path()).length).toBe(before + 7);
    expect(h.deps.health.isHealthy(h.endpoints.items.id)).toBe(true);
    expect((await fetch(url)).status).toBe(402);
    h.upstream.mode = 'ok';
    expect((await sendUntilSettled(header)).status).toBe(200);
  }, 20_000);
});

describe('what counts as delivered', () => {
  for (const status of [408, 429]) {
    it(`an upstream ${status} is not a delivery: the payment stays redeemable`, async () => {
      const header = await paidHeader('solana');
      h.upstream.mode = 'status';
      h.upstream.status = status;
      const res = await fetch(url, withPayment({}, header));
      expect(res.status).toBe(502);
      expect(await res.json()).toMatchObject({
        error: 'upstream_error',
        retryable: true,
        upstreamStatus: status,
      });
      h.upstream.mode = 'ok';
      const retried = await sendUntilSettled(header);
      expect(retried.status).toBe(200);
      expect(await retried.json()).toMatchObject({ ok: true });
    });
  }

  it('an upstream 404 is a delivery: it is stored and replayed', async () => {
    const header = await paidHeader('sui');
    h.upstream.mode = 'status';
    h.upstream.status = 404;
    expect((await fetch(url, withPayment({}, header))).status).toBe(404);
    h.upstream.mode = 'ok';
    const replay = await fetch(url, withPayment({}, header));
    expect(replay.status).toBe(404);
    expect(replay.headers.get('x-tollgate-replay')).toBe('true');
  });
});

describe('a database failure on the money path', () => {
  it('while claiming is a retryable 503, and the same proof works once the database is back', async () => {
    const header = await paidHeader('solana');
    const repo = h.store.redemptions;
    const claim = repo.claim;
    repo.claim = async () => {
      throw new Error('connection terminated unexpectedly');
    };
    try {
      const res = await fetch(url, withPayment({}, header));
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await res.json()).toMatchObject({ error: 'service_unavailable', retryable: true });
    } finally {
      repo.claim = claim;
    }
    expect((await fetch(url, withPayment({}, header))).status).toBe(200);
  });

  it('while storing the answer still sends it, and the proof works again once the lease ends', async () => {
    const header = await paidHeader('sui');
    const repo = h.store.redemptions;
    const complete = repo.complete;
    repo.complete = async () => {
      throw new Error('disk full');
    };
    try {
      const res = await fetch(url, withPayment({}, header));
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true });
    } finally {
      repo.complete = complete;
    }
    const retried = await sendUntilSettled(header);
    expect(retried.status).toBe(200);
  });
});
