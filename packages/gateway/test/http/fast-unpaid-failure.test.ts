/**
 * The fast path (the 402 and the free forward) runs in the server's own request listener,
 * where a throw would end the process. If it fails before answering, the request goes to
 * Fastify's route (which answers it as always) and the failure is logged; if it fails after
 * its answer went out (recording it), that connection is closed and the failure is logged.
 * Either way the gateway keeps serving.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fastUnpaidAnswered } from '../../src/http/server.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

let h: Harness;
const lines: string[] = [];
beforeAll(async () => {
  h = await startHarness({ env: { LOG_LEVEL: 'info' }, logLines: lines });
});
afterAll(async () => {
  await h?.close();
});

it('a fast 402 that throws hands the request to the route, logs it, and the gateway keeps serving', async () => {
  const url = `${h.baseUrl}/p/${h.project.slug}/items?api_key=s3cret`;
  expect((await fetch(url)).status).toBe(402); // the snapshot is now cached
  const peek = h.deps.catalog.peek;
  h.deps.catalog.peek = () => {
    throw new Error('snapshot broken');
  };
  try {
    const before = fastUnpaidAnswered(h.app);
    const res = await fetch(url);
    expect(res.status).toBe(402);
    expect(((await res.json()) as { error: string }).error).toBe('payment_required');
    expect(fastUnpaidAnswered(h.app)).toBe(before);
  } finally {
    h.deps.catalog.peek = peek;
  }
  expect(lines.some((l) => l.includes('"level":50') && l.includes('snapshot broken'))).toBe(true);
  // Neither the error line nor the access lines (of the fast path and of the route) carry the query.
  expect(lines.filter((l) => l.includes('"msg":"request"')).length).toBeGreaterThanOrEqual(2);
  expect(lines.some((l) => l.includes('s3cret'))).toBe(false);
  expect((await fetch(url)).status).toBe(402);
});

it('a fast 402 whose recording throws after the answer went out keeps that answer, logs it, and the gateway keeps serving', async () => {
  const url = `${h.baseUrl}/p/${h.project.slug}/items?api_key=s3cret`;
  expect((await fetch(url)).status).toBe(402); // the snapshot is now cached
  const counter = h.deps.metrics.httpRequests;
  const inc = counter.inc;
  counter.inc = () => {
    throw new Error('metrics broken');
  };
  try {
    const before = fastUnpaidAnswered(h.app);
    const res = await fetch(url);
    // The 402 went out before the throw: the client has it whole; the route never saw it.
    expect(res.status).toBe(402);
    expect(((await res.json()) as { error: string }).error).toBe('payment_required');
    expect(fastUnpaidAnswered(h.app)).toBe(before + 1);
  } finally {
    counter.inc = inc;
  }
  const error = lines.find((l) => l.includes('"level":50') && l.includes('metrics broken'));
  expect(error).toContain('fast path failed after answering; the connection is closed');
  expect(error).not.toContain('s3cret');
  expect((await fetch(url)).status).toBe(402);
});
