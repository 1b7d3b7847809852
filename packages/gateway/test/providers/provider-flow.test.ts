/**
 * The whole provider journey over a real listening socket: sign in with real
 * wallets on both chains, create a project, register an API, add endpoints, set
 * rails, and find it all in the public directory with the right URLs and totals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  PLATFORM,
  type ProviderApp,
  solanaWallet,
  startProviderApp,
  suiWallet,
  type TestWallet,
} from './harness.ts';

let h: ProviderApp;
beforeAll(async () => {
  h = await startProviderApp({ listen: true });
});
afterAll(async () => {
  await h.close();
});

async function http(method: string, path: string, opts: { token?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (opts.token) headers['authorization'] = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${h.baseUrl}${path}`, {
    method,
    headers,
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

async function login(w: TestWallet): Promise<string> {
  const c = await http('POST', '/v1/auth/challenge', { body: { chain: w.chain, address: w.address } });
  expect(c.status).toBe(200);
  const v = await http('POST', '/v1/auth/verify', {
    body: {
      chain: w.chain,
      address: w.address,
      message: c.body.message,
      signature: await w.sign(c.body.message),
    },
  });
  expect(v.status).toBe(200);
  return v.body.accessToken;
}

describe('provider journey over HTTP', () => {
  it('goes from wallet sign-in to a listed, priced API', async () => {
    const owner = suiWallet();
    const token = await login(owner);
    const payoutSui = suiWallet().address;
    const payoutSolana = (await solanaWallet()).address;

    const project = await http('POST', '/v1/projects', {
      token,
      body: { slug: 'weather-co', name: 'Weather Co', description: 'Forecasts by city', category: 'weather' },
    });
    expect(project.status).toBe(201);
    expect(project.body).toMatchObject({
      slug: 'weather-co',
      category: 'weather',
      owner: { chain: 'sui', address: owner.address },
    });
    expect(project.headers.get('cache-control')).toBe('no-store');

    const api = await http('POST', '/v1/projects/weather-co/apis', {
      token,
      body: {
        name: 'upstream',
        baseUrl: 'http://127.0.0.1:9/v2/',
        auth: { type: 'header', name: 'x-api-key', secret: 'sk_live_0123456789abcdefWXYZ' },
      },
    });
    expect(api.status).toBe(201);
    expect(api.body).toMatchObject({
      name: 'upstream',
      baseUrl: 'http://127.0.0.1:9/v2',
      auth: { type: 'header', name: 'x-api-key', secretLast4: '…WXYZ' },
    });

    const forecast = await http('POST', '/v1/projects/weather-co/endpoints', {
      token,
      body: {
        apiId: api.body.id,
        method: 'GET',
        path: '/forecast/daily',
        price: '0.25',
        description: 'Daily forecast',
        inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
      },
    });
    expect(forecast.status).toBe(201);
    expect(forecast.body).toMatchObject({
      method: 'GET',
      path: 'forecast/daily',
      endpointType: 'external_proxy',
      protectedUrl: 'https://gateway.tollgate.test/p/weather-co/forecast/daily',
      price: '0.25',
      fee: '0.0025', // 1% of 0.25, above the 0.001 minimum
      total: '0.2525',
      timeoutMs: 30000,
      enabled: true,
    });

    const cheap = await http('POST', '/v1/projects/weather-co/endpoints', {
      token,
      body: { apiId: api.body.id, method: 'POST', path: 'alerts', price: '0.01', timeoutMs: 5000 },
    });
    expect(cheap.body).toMatchObject({ price: '0.01', fee: '0.001', total: '0.011', timeoutMs: 5000 });

    const off = await http('POST', '/v1/projects/weather-co/endpoints', {
      token,
      body: { apiId: api.body.id, method: 'GET', path: 'beta', price: '1', enabled: false },
    });
    expect(off.status).toBe(201);

    // Not listed before it has a rail.
    expect((await http('GET', '/v1/directory/apis/weather-co')).status).toBe(404);

    const sui = await http('PUT', '/v1/projects/weather-co/rails/sui', {
      token,
      body: { network: 'localnet', providerRecipient: payoutSui.toUpperCase().replace('0X', '0x') },
    });
    expect(sui.status).toBe(200);
    expect(sui.body).toEqual({
      chain: 'sui',
      network: 'localnet',
      providerRecipient: payoutSui,
      platformRecipient: PLATFORM.sui,
      asset: {
        symbol: 'USDC',
        decimals: 6,
        coinType: '0xdba34672e30cb065b1f93e3ab55318768fd6fef66c15942c9f7cb846e2f900e7::usdc::USDC',
      },
      updatedAt: expect.any(String),
    });
    const sol = await http('PUT', '/v1/projects/weather-co/rails/solana', {
      token,
      body: { network: 'localnet', providerRecipient: payoutSolana },
    });
    expect(sol.body).toMatchObject({
      platformRecipient: PLATFORM.solana,
      asset: { symbol: 'USDC', decimals: 6, mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' },
    });
    expect((await http('GET', '/v1/projects/weather-co/rails', { token })).body.rails).toHaveLength(2);

    const listed = await http('GET', '/v1/directory/apis?q=forecast');
    expect(listed.status).toBe(200);
    expect(listed.body.apis).toEqual([
      {
        slug: 'weather-co',
        name: 'Weather Co',
        description: 'Forecasts by city',
        category: 'weather',
        url: 'https://gateway.tollgate.test/v1/directory/apis/weather-co',
        chains: ['solana', 'sui'],
        endpointCount: 2,
      },
    ]);

    const detail = await http('GET', '/v1/directory/apis/weather-co');
    expect(detail.status).toBe(200);
    expect(detail.body.rails.map((r: { chain: string }) => r.chain)).toEqual(['solana', 'sui']);
    expect(detail.body.endpoints).toEqual([
      expect.objectContaining({ method: 'POST', path: 'alerts', total: '0.011', available: true }),
      expect.objectContaining({
        method: 'GET',
        path: 'beta',
        price: '1',
        fee: '0.01',
        total: '1.01',
        available: false,
      }),
      expect.objectContaining({
        method: 'GET',
        path: 'forecast/daily',
        protectedUrl: 'https://gateway.tollgate.test/p/weather-co/forecast/daily',
        price: '0.25',
        fee: '0.0025',
        total: '0.2525',
        available: true,
        inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
      }),
    ]);
    const text = JSON.stringify(detail.body);
    expect(text).not.toContain('127.0.0.1:9');
    expect(text).not.toContain(api.body.id);

    const categories = await http('GET', '/v1/directory/categories');
    expect(categories.body.categories).toContainEqual({ category: 'weather', count: 1 });

    // Disabling the last enabled endpoints delists the project.
    for (const id of [forecast.body.id, cheap.body.id]) {
      const patched = await http('PATCH', `/v1/projects/weather-co/endpoints/${id}`, {
        token,
        body: { enabled: false },
      });
      expect(patched.body.enabled).toBe(false);
    }
    expect((await http('GET', '/v1/directory/apis/weather-co')).status).toBe(404);
    expect((await http('GET', '/v1/directory/apis?q=forecast')).body.apis).toEqual([]);
  });
});

describe('provider API details', () => {
  let token: string;
  let owner: TestWallet;
  beforeAll(async () => {
    owner = await solanaWallet();
    token = await login(owner);
  });

  async function setup(slug: string, category = 'tools') {
    expect((await http('POST', '/v1/projects', { token, body: { slug, name: slug, category } })).status).toBe(
      201,
    );
    const api = await http('POST', `/v1/projects/${slug}/apis`, {
      token,
      body: { name: 'o', baseUrl: 'http://127.0.0.1:9' },
    });
    const ep = await http('POST', `/v1/projects/${slug}/endpoints`, {
      token,
      body: { apiId: api.body.id, method: 'GET', path: 'x', price: '0.001' },
    });
    await http('PUT', `/v1/projects/${slug}/rails/solana`, {
      token,
      body: { network: 'localnet', providerRecipient: owner.address },
    });
    return { api: api.body, endpoint: ep.body };
  }

  it('pages the directory with an opaque cursor and filters by category', async () => {
    for (const s of ['page-a', 'page-b', 'page-c']) await setup(s, 'paging');
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/v1/directory/apis?category=paging&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await http('GET', q);
      expect(page.status).toBe(200);
      seen.push(...page.body.apis.map((a: { slug: string }) => a.slug));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(['page-a', 'page-b', 'page-c']);
    const cats = await http('GET', '/v1/directory/categories');
    expect(cats.body.categories).toContainEqual({ category: 'paging', count: 3 });
    expect((await http('GET', '/v1/directory/apis?cursor=%%%')).status).toBe(400);
    expect((await http('GET', '/v1/directory/apis?limit=0')).status).toBe(400);
    expect((await http('GET', '/v1/directory/apis?limit=1000')).status).toBe(400);
  });

  it('marks an endpoint unavailable when the health monitor says it is down', async () => {
    const { endpoint } = await setup('flaky-api');
    for (let i = 0; i < 10; i++) h.deps.health.recordFailure(endpoint.id, 'flaky-api');
    const detail = await http('GET', '/v1/directory/apis/flaky-api');
    expect(detail.body.endpoints[0]).toMatchObject({ path: 'x', available: false });
    h.deps.health.recordSuccess(endpoint.id, 'flaky-api');
    expect((await http('GET', '/v1/directory/apis/flaky-api')).body.endpoints[0].available).toBe(true);
  });

  it('patches and deletes projects, APIs, endpoints and rails', async () => {
    const { api, endpoint } = await setup('edit-me');
    const p = await http('PATCH', '/v1/projects/edit-me', {
      token,
      body: { name: 'Edited', category: 'misc' },
    });
    expect(p.body).toMatchObject({ name: 'Edited', category: 'misc' });
    const a = await http('PATCH', `/v1/projects/edit-me/apis/${api.id}`, {
      token,
      body: { auth: { type: 'bearer', secret: 'bearer-secret-value-0001' } },
    });
    expect(a.body.auth).toEqual({ type: 'bearer', name: null, secretLast4: '…0001' });
    const cleared = await http('PATCH', `/v1/projects/edit-me/apis/${api.id}`, {
      token,
      body: { auth: null },
    });
    expect(cleared.body.auth).toBeNull();
    const e = await http('PATCH', `/v1/projects/edit-me/endpoints/${endpoint.id}`, {
      token,
      body: { price: '2', path: 'y/z', method: 'POST' },
    });
    expect(e.body).toMatchObject({ price: '2', fee: '0.02', total: '2.02', path: 'y/z', method: 'POST' });
    expect((await http('GET', `/v1/projects/edit-me/endpoints/${endpoint.id}`, { token })).body.path).toBe(
      'y/z',
    );
    expect((await http('DELETE', '/v1/projects/edit-me/rails/solana', { token })).status).toBe(204);
    expect((await http('DELETE', '/v1/projects/edit-me/rails/solana', { token })).status).toBe(404);
    expect((await http('DELETE', `/v1/projects/edit-me/endpoints/${endpoint.id}`, { token })).status).toBe(
      204,
    );
    expect((await http('DELETE', `/v1/projects/edit-me/apis/${api.id}`, { token })).status).toBe(204);
    expect((await http('GET', `/v1/projects/edit-me/apis/${api.id}`, { token })).status).toBe(404);
    expect((await http('DELETE', '/v1/projects/edit-me', { token })).status).toBe(204);
    expect((await http('GET', '/v1/projects/edit-me', { token })).status).toBe(404);
  });

  it('refuses a duplicate slug and a duplicate method+path with 409', async () => {
    const { api } = await setup('dupe-check');
    const again = await http('POST', '/v1/projects', { token, body: { slug: 'dupe-check', name: 'x' } });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: 'conflict', reason: 'slug_taken' });
    const ep = await http('POST', '/v1/projects/dupe-check/endpoints', {
      token,
      body: { apiId: api.id, method: 'GET', path: '/x', price: '1' },
    });
    expect(ep.status).toBe(409);
    expect(ep.body.reason).toBe('endpoint_exists');
    const other = await http('POST', '/v1/projects/dupe-check/endpoints', {
      token,
      body: { apiId: api.id, method: 'POST', path: 'x', price: '1' },
    });
    expect(other.status).toBe(201);
  });

  it('lets the operator create a project for a provider, who then owns it', async () => {
    const provider = suiWallet();
    const created = await http('POST', '/v1/projects', {
      token: ADMIN_TOKEN,
      body: { slug: 'on-behalf', name: 'On behalf', owner: { chain: 'sui', address: provider.address } },
    });
    expect(created.status).toBe(201);
    expect(created.body.owner).toEqual({ chain: 'sui', address: provider.address });
    const providerToken = await login(provider);
    const mine = await http('GET', '/v1/projects', { token: providerToken });
    expect(mine.body.projects.map((p: { slug: string }) => p.slug)).toEqual(['on-behalf']);
    const all = await http('GET', '/v1/projects', { token: ADMIN_TOKEN });
    expect(all.body.projects.map((p: { slug: string }) => p.slug)).toEqual(
      expect.arrayContaining(['on-behalf', 'dupe-check']),
    );
    const noOwner = await http('POST', '/v1/projects', {
      token: ADMIN_TOKEN,
      body: { slug: 'orphan', name: 'x' },
    });
    expect(noOwner.status).toBe(400);
    expect(noOwner.body.reason).toBe('owner_required');
  });
});
