/**
 * A project opts in to stock x402 v2 payers with `x402Exact` (DESIGN §4.12, issue 11):
 * off by default, set on create or by PATCH, shown by every project view, strictly typed,
 * and changed only by the owner or the operator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  call,
  type ProviderApp,
  signIn,
  solanaWallet,
  startProviderApp,
  suiWallet,
} from './harness.ts';

let h: ProviderApp;
let alice: string;
let mallory: string;

beforeAll(async () => {
  h = await startProviderApp();
  alice = await signIn(h.app, suiWallet());
  mallory = await signIn(h.app, await solanaWallet());
});
afterAll(async () => {
  await h.close();
});

describe('project x402Exact', () => {
  it('is false unless asked for, and shown by create, get and list', async () => {
    const created = await call(h.app, 'POST', '/v1/projects', {
      token: alice,
      body: { slug: 'plain-api', name: 'Plain' },
    });
    expect(created.status).toBe(201);
    expect(created.body.x402Exact).toBe(false);
    expect((await call(h.app, 'GET', '/v1/projects/plain-api', { token: alice })).body.x402Exact).toBe(false);
    expect((await h.store.projects.bySlug('plain-api'))!.x402Exact).toBe(false);
  });

  it('can be opted in when the project is created', async () => {
    const created = await call(h.app, 'POST', '/v1/projects', {
      token: alice,
      body: { slug: 'exact-api', name: 'Exact', x402Exact: true },
    });
    expect(created.status).toBe(201);
    expect(created.body.x402Exact).toBe(true);
    const got = await call(h.app, 'GET', '/v1/projects/exact-api', { token: alice });
    expect(got.body).toMatchObject({ slug: 'exact-api', x402Exact: true });
    const list = await call(h.app, 'GET', '/v1/projects', { token: alice });
    expect(list.body.projects.find((p: { slug: string }) => p.slug === 'exact-api').x402Exact).toBe(true);
    expect((await h.store.projects.bySlug('exact-api'))!.x402Exact).toBe(true);
  });

  it('is switched on and off by PATCH, and left alone by other patches', async () => {
    await call(h.app, 'POST', '/v1/projects', { token: alice, body: { slug: 'toggle-api', name: 'Toggle' } });
    const on = await call(h.app, 'PATCH', '/v1/projects/toggle-api', {
      token: alice,
      body: { x402Exact: true },
    });
    expect(on.status).toBe(200);
    expect(on.body.x402Exact).toBe(true);
    const renamed = await call(h.app, 'PATCH', '/v1/projects/toggle-api', {
      token: alice,
      body: { name: 'Renamed' },
    });
    expect(renamed.body).toMatchObject({ name: 'Renamed', x402Exact: true });
    const off = await call(h.app, 'PATCH', '/v1/projects/toggle-api', {
      token: alice,
      body: { x402Exact: false },
    });
    expect(off.body.x402Exact).toBe(false);
    expect((await h.store.projects.bySlug('toggle-api'))!.x402Exact).toBe(false);
  });

  it('must be a JSON boolean', async () => {
    await call(h.app, 'POST', '/v1/projects', { token: alice, body: { slug: 'typed-api', name: 'Typed' } });
    for (const value of ['true', 1, 0, null, {}]) {
      const patched = await call(h.app, 'PATCH', '/v1/projects/typed-api', {
        token: alice,
        body: { x402Exact: value },
      });
      expect(patched.status).toBe(400);
      expect(patched.body.error).toBe('invalid_request');
      const created = await call(h.app, 'POST', '/v1/projects', {
        token: alice,
        body: { slug: 'typed-api-2', name: 'Typed', x402Exact: value },
      });
      expect(created.status).toBe(400);
    }
    expect((await h.store.projects.bySlug('typed-api'))!.x402Exact).toBe(false);
    expect(await h.store.projects.bySlug('typed-api-2')).toBeNull();
  });

  it('is changed only by the owner or the operator, never by another owner', async () => {
    await call(h.app, 'POST', '/v1/projects', { token: alice, body: { slug: 'owned-api', name: 'Owned' } });
    const other = await call(h.app, 'PATCH', '/v1/projects/owned-api', {
      token: mallory,
      body: { x402Exact: true },
    });
    expect(other.status).toBe(404);
    expect((await h.store.projects.bySlug('owned-api'))!.x402Exact).toBe(false);

    const operator = await call(h.app, 'PATCH', '/v1/projects/owned-api', {
      token: ADMIN_TOKEN,
      body: { x402Exact: true },
    });
    expect(operator.status).toBe(200);
    expect(operator.body.x402Exact).toBe(true);
  });
});
