/**
 * The fast path and the catalogue's snapshot: a request that finds the project's snapshot
 * missing or too old (catalog.peek) waits for its reload and is then answered as any other,
 * by the fast path. Leaving it to the route instead ran Fastify's code for every request that
 * came while the reload ran, and their other objects cost the fast path its optimized code on
 * the first burst after each quiet spell (issue 14: the 402's p99 after an idle gateway).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

it('counts the wait for the snapshot in the answer’s time (its access line)', async () => {
  const url = `${h.baseUrl}/p/${h.project.slug}/items?wait=1`;
  h.deps.catalog.invalidate(h.project.slug);
  const get = h.deps.catalog.get;
  h.deps.catalog.get = (slug) => new Promise((r) => setTimeout(r, 300)).then(() => get(slug));
  try {
    const before = fastUnpaidAnswered(h.app);
    expect((await fetch(url)).status).toBe(402);
    expect(fastUnpaidAnswered(h.app)).toBe(before + 1);
  } finally {
    h.deps.catalog.get = get;
  }
  await new Promise((r) => setTimeout(r, 50));
  const line = lines.map((l) => JSON.parse(l)).findLast((l) => l.msg === 'request' && l.status === 402);
  expect(line.ms).toBeGreaterThanOrEqual(290);
});

describe('a caller over its rate limit', () => {
  let limited: Harness;
  beforeAll(async () => {
    limited = await startHarness({ env: { TOLLGATE_RATE_LIMIT_PER_MIN: '2' } });
  });
  afterAll(async () => {
    await limited?.close();
  });

  it('is refused before any project is looked up, and counted once a request', async () => {
    const projects = limited.deps.store.projects;
    const bySlug = projects.bySlug;
    let lookups = 0;
    projects.bySlug = (slug) => {
      lookups++;
      return bySlug.call(projects, slug);
    };
    try {
      // Two tokens: one request that waits for its snapshot and is answered, one that waits and
      // goes to the route (no such project). Each spends one token, not two.
      limited.deps.catalog.invalidate();
      expect((await fetch(`${limited.baseUrl}/p/${limited.project.slug}/items`)).status).toBe(402);
      expect((await fetch(`${limited.baseUrl}/p/no-such-project-0/items`)).status).toBe(404);
      const looked = lookups;
      for (let i = 1; i <= 20; i++) {
        const res = await fetch(`${limited.baseUrl}/p/no-such-project-${i}/items`);
        expect(res.status).toBe(429);
      }
      expect(lookups).toBe(looked);
    } finally {
      projects.bySlug = bySlug;
    }
  });
});
