/** Owners see and change only their own projects; someone else's project is indistinguishable from none. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  call,
  ORIGIN,
  type ProviderApp,
  signIn,
  solanaWallet,
  startProviderApp,
  suiWallet,
} from './harness.ts';

let h: ProviderApp;
let alice: string;
let mallory: string;
let ids: { api: string; endpoint: string };

beforeAll(async () => {
  h = await startProviderApp();
  alice = await signIn(h.app, suiWallet());
  mallory = await signIn(h.app, await solanaWallet());
  await call(h.app, 'POST', '/v1/projects', { token: alice, body: { slug: 'alice-api', name: 'Alice' } });
  const api = await call(h.app, 'POST', '/v1/projects/alice-api/apis', {
    token: alice,
    body: { name: 'o', baseUrl: ORIGIN },
  });
  const ep = await call(h.app, 'POST', '/v1/projects/alice-api/endpoints', {
    token: alice,
    body: { apiId: api.body.id, method: 'GET', path: 'a', price: '0.01' },
  });
  ids = { api: api.body.id, endpoint: ep.body.id };
});
afterAll(async () => {
  await h.close();
});

describe("another owner's project", () => {
  const routes = () =>
    [
      ['GET', '/v1/projects/alice-api', undefined],
      ['PATCH', '/v1/projects/alice-api', { name: 'pwned' }],
      ['DELETE', '/v1/projects/alice-api', undefined],
      ['GET', '/v1/projects/alice-api/apis', undefined],
      ['POST', '/v1/projects/alice-api/apis', { name: 'x', baseUrl: ORIGIN }],
      ['GET', `/v1/projects/alice-api/apis/${ids.api}`, undefined],
      ['PATCH', `/v1/projects/alice-api/apis/${ids.api}`, { baseUrl: 'http://127.0.0.1:1' }],
      ['DELETE', `/v1/projects/alice-api/apis/${ids.api}`, undefined],
      ['GET', '/v1/projects/alice-api/endpoints', undefined],
      ['POST', '/v1/projects/alice-api/endpoints', { apiId: ids.api, method: 'GET', path: 'b', price: '0' }],
      ['GET', `/v1/projects/alice-api/endpoints/${ids.endpoint}`, undefined],
      ['PATCH', `/v1/projects/alice-api/endpoints/${ids.endpoint}`, { price: '0' }],
      ['DELETE', `/v1/projects/alice-api/endpoints/${ids.endpoint}`, undefined],
      ['GET', '/v1/projects/alice-api/rails', undefined],
      [
        'PUT',
        '/v1/projects/alice-api/rails/sui',
        { network: 'localnet', providerRecipient: `0x${'1'.repeat(64)}` },
      ],
      ['DELETE', '/v1/projects/alice-api/rails/sui', undefined],
    ] as const;

  it('answers 404 on every route, exactly like a project that does not exist', async () => {
    for (const [method, url, body] of routes()) {
      const res = await call(h.app, method, url, { token: mallory, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${url}`).toBe(404);
      expect(res.body).toMatchObject({ error: 'not_found', reason: 'project_not_found' });
      const missing = await call(h.app, method, url.replace('alice-api', 'nobody-api'), {
        token: mallory,
        ...(body ? { body } : {}),
      });
      expect(missing.status).toBe(404);
      expect(missing.body.message).toBe(res.body.message.replace('alice-api', 'nobody-api'));
    }
    const still = await call(h.app, 'GET', '/v1/projects/alice-api', { token: alice });
    expect(still.body.name).toBe('Alice');
    expect(
      (await call(h.app, 'GET', '/v1/projects/alice-api/endpoints', { token: alice })).body.endpoints,
    ).toHaveLength(1);
  });

  it("is absent from the other owner's list", async () => {
    const list = await call(h.app, 'GET', '/v1/projects', { token: mallory });
    expect(list.body.projects).toEqual([]);
  });

  it('answers 401 to every route without a token', async () => {
    for (const [method, url, body] of routes()) {
      const res = await call(h.app, method, url, body ? { body } : {});
      expect(res.status, `${method} ${url}`).toBe(401);
    }
    expect((await call(h.app, 'GET', '/v1/projects')).status).toBe(401);
  });

  it('is visible to the operator', async () => {
    const res = await call(h.app, 'GET', '/v1/projects/alice-api/endpoints', { token: ADMIN_TOKEN });
    expect(res.status).toBe(200);
    expect(res.body.endpoints).toHaveLength(1);
  });

  it("cannot be created in someone else's name", async () => {
    const victim = suiWallet();
    const res = await call(h.app, 'POST', '/v1/projects', {
      token: mallory,
      body: { slug: 'framed', name: 'x', owner: { chain: 'sui', address: victim.address } },
    });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: 'forbidden', reason: 'owner_not_caller' });
    expect(await h.store.projects.bySlug('framed')).toBeNull();
  });

  it('does not accept an API id from another project for an endpoint', async () => {
    await call(h.app, 'POST', '/v1/projects', { token: mallory, body: { slug: 'mallory-api', name: 'M' } });
    const res = await call(h.app, 'POST', '/v1/projects/mallory-api/endpoints', {
      token: mallory,
      body: { apiId: ids.api, method: 'GET', path: 'steal', price: '0' },
    });
    expect(res.status).toBe(400);
    expect(res.body.reason).toBe('api_not_found');
  });
});
