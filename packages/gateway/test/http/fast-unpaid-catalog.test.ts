/**
 * The fast path and the catalogue's snapshot: a request that finds the project's snapshot
 * missing or too old (catalog.peek) waits for its reload and is then answered as any other,
 * by the fast path. Leaving it to the route instead ran Fastify's code for every request that
 * came while the reload ran, and their other objects cost the fast path its optimized code on
 * the first burst after each quiet spell (issue 14: the 402's p99 after an idle gateway).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fastUnpaidAnswered } from '../../src/http/server.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

it('answers the first requests after the snapshot expired itself, once the reload lands', async () => {
  const url = `${h.baseUrl}/p/${h.project.slug}/items`;
  expect((await fetch(url)).status).toBe(402); // the snapshot is now cached
  h.deps.catalog.invalidate(h.project.slug); // as a snapshot past twice its TTL: peek has none
  const before = fastUnpaidAnswered(h.app);
  const answers = await Promise.all([fetch(url), fetch(url), fetch(url)]);
  expect(answers.map((r) => r.status)).toEqual([402, 402, 402]);
  for (const r of answers) expect(((await r.json()) as { error: string }).error).toBe('payment_required');
  expect(fastUnpaidAnswered(h.app)).toBe(before + 3);
});

it('leaves the request to the route when the reload fails, and the route answers it', async () => {
  const url = `${h.baseUrl}/p/${h.project.slug}/items`;
  h.deps.catalog.invalidate(h.project.slug);
  const get = h.deps.catalog.get;
  let calls = 0;
  h.deps.catalog.get = (slug) => (++calls === 1 ? Promise.reject(new Error('store busy')) : get(slug));
  try {
    const before = fastUnpaidAnswered(h.app);
    const res = await fetch(url);
    expect(res.status).toBe(402);
    expect(fastUnpaidAnswered(h.app)).toBe(before);
    expect(calls).toBe(2); // the fast path's wait, then the route's own load
  } finally {
    h.deps.catalog.get = get;
  }
});

it('leaves an unknown project to the route after looking it up: 404', async () => {
  const before = fastUnpaidAnswered(h.app);
  const res = await fetch(`${h.baseUrl}/p/no-such-project/items`);
  expect(res.status).toBe(404);
  expect(fastUnpaidAnswered(h.app)).toBe(before);
});
