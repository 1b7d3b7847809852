/**
 * The fast path's forward of a free endpoint (src/http/fast-unpaid.ts) where it must do
 * more than copy the route (fast-unpaid-parity.test.ts covers that): a client that
 * leaves ends the upstream exchange (and, as on every route, gets no access line), an upstream that
 * breaks mid-answer cuts the client's connection and is logged, and a failure inside the
 * fast path after the upstream may have the request is answered there, never forwarded
 * again by the route.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fastUnpaidAnswered } from '../../src/http/server.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

let h: Harness;
const lines: string[] = [];

beforeAll(async () => {
  h = await startHarness({
    logLines: lines,
    env: { LOG_LEVEL: 'debug', TOLLGATE_RATE_LIMIT_PER_MIN: '100000', PLATFORM_FEE_MIN: '0' },
  });
  // Loads the project's catalogue snapshot: the fast path answers from it.
  await h.app.inject({ method: 'GET', url: `/p/${h.project.slug}/items` });
}, 120_000);
afterAll(async () => {
  await h?.close();
});
beforeEach(() => {
  h.upstream.mode = 'scripted';
});

let n = 0;
const freeUrl = (fault: string) => `/p/${h.project.slug}/free?fault=${fault}&n=${++n}`;

async function waitFor<T>(get: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = get();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`never: ${what}`);
}

function accessLine(reqId: string) {
  return waitFor(
    () =>
      lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l['msg'] === 'request' && l['reqId'] === reqId),
    `the access line of ${reqId}`,
  );
}

async function upstreamOutcomes(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const v of (await h.deps.metrics.upstream.get()).values) out[String(v.labels['outcome'])] = v.value;
  return out;
}

describe('the fast forward of a free endpoint', () => {
  it('ends the upstream exchange when the client leaves first, counted as client_aborted', async () => {
    const before = await upstreamOutcomes();
    const answered = fastUnpaidAnswered(h.app);
    const url = freeUrl('delay2000');
    const reqId = `leaver-${n}`;
    const req = httpRequest(`${h.baseUrl}${url}`, { headers: { 'x-request-id': reqId }, agent: false });
    req.on('error', () => {});
    req.end();
    const call = await waitFor(
      () => h.upstream.answers.find((a) => a.url.endsWith(`n=${n}`)),
      'upstream call',
    );
    req.destroy();
    await waitFor(() => (call.endedAt > 0 ? true : undefined), 'the upstream exchange to end');
    expect(call.complete).toBe(false);
    expect(call.endedAt - call.startedAt).toBeLessThan(2000);
    expect(fastUnpaidAnswered(h.app)).toBe(answered + 1);
    // As on every route, a request whose client left before the answer has no access line.
    const next = await fetch(`${h.baseUrl}${freeUrl('ok')}`);
    await accessLine(String(next.headers.get('x-request-id')));
    expect(lines.some((l) => l.includes(reqId))).toBe(false);
    expect((await upstreamOutcomes())['client_aborted']).toBe((before['client_aborted'] ?? 0) + 1);
    // A caller that hung up says nothing about the upstream.
    expect(h.deps.health.isHealthy(h.endpoints.free.id)).toBe(true);
  });

  it('cuts the client’s connection when the upstream breaks mid-answer, logs it, and keeps serving', async () => {
    const url = freeUrl('stall');
    const reqId = `stalled-${n}`;
    const got = await new Promise<{ status: number; body: string; error: string | null }>((resolve) => {
      const req = httpRequest(
        `${h.baseUrl}${url}`,
        { headers: { 'x-request-id': reqId }, agent: false },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            body += d;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, error: null }));
          res.on('error', (err) => resolve({ status: res.statusCode ?? 0, body, error: err.message }));
        },
      );
      req.on('error', (err) => resolve({ status: 0, body: '', error: err.message }));
      req.end();
    });
    // The answer had begun (status and first part sent), so the client learns of it by the cut.
    expect(got.status).toBe(200);
    expect(got.body).toMatch(/^scripted call=1 fault=stall/);
    expect(got.error).not.toBeNull();
    const warn = await waitFor(
      () =>
        lines
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .find((l) => l['reqId'] === reqId && l['level'] === 40),
      'the warning',
    );
    expect(warn['reason']).toBe('TOLLGATE_UPSTREAM_TIMEOUT');
    expect(warn['endpoint']).toBe(h.endpoints.free.id);
    expect((await fetch(`${h.baseUrl}${freeUrl('ok')}`)).status).toBe(200);
  }, 15_000);

  it('answers 500 itself when it fails after starting, and the route never forwards the request again', async () => {
    const relay = h.deps.forwarder.relay;
    h.deps.forwarder.relay = () => {
      throw new Error('relay broken');
    };
    const url = freeUrl('ok');
    try {
      const res = await fetch(`${h.baseUrl}${url}`);
      expect(res.status).toBe(500);
      expect(((await res.json()) as { error: string }).error).toBe('internal_error');
    } finally {
      h.deps.forwarder.relay = relay;
    }
    expect(h.upstream.calls().filter((c) => c.url.endsWith(`n=${n}`))).toEqual([]);
    expect(lines.some((l) => l.includes('"level":50') && l.includes('relay broken'))).toBe(true);
    expect((await fetch(`${h.baseUrl}${freeUrl('ok')}`)).status).toBe(200);
  });

  it('answers 500 when handling the upstream’s answer throws, and keeps serving', async () => {
    const counter = h.deps.metrics.upstream;
    const inc = counter.inc;
    counter.inc = () => {
      throw new Error('metrics broken');
    };
    try {
      const res = await fetch(`${h.baseUrl}${freeUrl('ok')}`);
      expect(res.status).toBe(500);
      expect(((await res.json()) as { error: string }).error).toBe('internal_error');
    } finally {
      counter.inc = inc;
    }
    expect(lines.some((l) => l.includes('"level":50') && l.includes('metrics broken'))).toBe(true);
    expect((await fetch(`${h.baseUrl}${freeUrl('ok')}`)).status).toBe(200);
  });
});
