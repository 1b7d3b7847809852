/**
 * Browser callers (docs/deploy.md, "CORS"): the gateway answers every CORS preflight
 * itself — an OPTIONS request carrying Origin and Access-Control-Request-Method is
 * never forwarded to a provider and never priced — while a plain OPTIONS request under
 * /p/ is still a request like any other (forwarded when its endpoint is registered
 * for OPTIONS, and paid for). The CORS headers a browser sees are the gateway's, never
 * an origin's, and every response carries X-Content-Type-Options: nosniff.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assembleDeps, buildApp } from '../../src/app.ts';
import { ConfigError, type EnvInput, loadConfig } from '../../src/config.ts';
import { publishProject } from '../../src/marketplace/publish.ts';
import { openStore } from '../../src/store/open-store.ts';
import { startUpstream, type Upstream } from '../proxy/upstream.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

const PAGE = 'https://app.example.com';

/** What a browser sends before a cross-origin request it may not make on its own. */
function preflight(method: string, headers = 'x-payment, content-type'): Record<string, string> {
  return { origin: PAGE, 'access-control-request-method': method, 'access-control-request-headers': headers };
}

function names(value: string | null | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
}

describe('CORS and nosniff through the real gateway (default: any origin, no credentials)', () => {
  let h: Harness;
  let origin: Upstream;
  let base: string;

  beforeAll(async () => {
    h = await startHarness({ env: { PLATFORM_FEE_MIN: '0' } }); // a price of 0 is then free
    origin = await startUpstream();
    origin.handle((_req, res) => {
      // An origin that tries to set the gateway's CORS policy (and a sniffable type).
      res
        .writeHead(200, [
          'content-type',
          'text/plain',
          'access-control-allow-origin',
          'https://evil.example',
          'access-control-allow-credentials',
          'true',
          'access-control-expose-headers',
          'x-secret',
          'x-content-type-options',
          'none',
          'vary',
          'accept-encoding',
        ])
        .end('ok');
    });
    const { project } = await publishProject(h.store, {
      slug: `cors-${randomBytes(3).toString('hex')}`,
      name: 'CORS origin',
      description: 'an API with an OPTIONS endpoint',
      category: 'test',
      owner: { chain: 'solana', address: h.recipients.solana.provider },
      api: { name: 'cors origin', baseUrl: `${origin.base}/base` },
      endpoints: [
        { method: 'OPTIONS', path: 'opts', price: '0.01', timeoutMs: 2000 },
        { method: 'GET', path: 'free', price: '0', timeoutMs: 2000 },
        { method: 'GET', path: 'paid', price: '0.01', timeoutMs: 2000 },
        { method: 'POST', path: 'paid', price: '0.01', timeoutMs: 2000 },
      ],
      rails: [
        { chain: 'solana', network: h.config.chainNetwork, providerRecipient: h.recipients.solana.provider },
      ],
    });
    base = `${h.baseUrl}/p/${project.slug}`;
  });
  afterAll(async () => {
    await origin?.close();
    await h?.close();
  });

  it('answers a preflight for a paid route itself: 204, never forwarded, never 402', async () => {
    const before = origin.seen.length;
    for (const path of ['opts', 'paid', 'free', 'no-such-endpoint']) {
      const res = await fetch(`${base}/${path}`, { method: 'OPTIONS', headers: preflight('POST') });
      expect(res.status, path).toBe(204);
      expect(await res.text()).toBe('');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(names(res.headers.get('access-control-allow-methods'))).toEqual(
        expect.arrayContaining(['get', 'head', 'post', 'put', 'patch', 'delete', 'options']),
      );
      expect(names(res.headers.get('access-control-allow-headers'))).toEqual(
        expect.arrayContaining(['x-payment', 'payment-signature', 'content-type', 'authorization']),
      );
      expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);
      expect(res.headers.get('payment-required')).toBeNull();
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    // Even for a project that does not exist, and on the project root.
    for (const url of [`${h.baseUrl}/p/no-such-project/x`, base]) {
      const res = await fetch(url, { method: 'OPTIONS', headers: preflight('GET') });
      expect(res.status, url).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    }
    expect(origin.seen.length).toBe(before);
  });

  it('still treats a plain OPTIONS request (no Access-Control-Request-Method) as a paid call', async () => {
    const before = origin.seen.length;
    const res = await fetch(`${base}/opts`, { method: 'OPTIONS', headers: { origin: PAGE } });
    expect(res.status).toBe(402);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    // Origin alone, or Access-Control-Request-Method alone, is not a preflight either.
    const bare = await fetch(`${base}/opts`, {
      method: 'OPTIONS',
      headers: { 'access-control-request-method': 'GET' },
    });
    expect(bare.status).toBe(402);
    expect(origin.seen.length).toBe(before);
  });

  it('lets a page read the 402 and its payment headers', async () => {
    const res = await fetch(`${base}/paid`, { headers: { origin: PAGE } });
    expect(res.status).toBe(402);
    await res.arrayBuffer();
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(names(res.headers.get('access-control-expose-headers'))).toEqual(
      expect.arrayContaining([
        'x-payment-response',
        'payment-required',
        'payment-response',
        'x-request-id',
        'retry-after',
        'x-tollgate-replay',
      ]),
    );
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it("sends the gateway's CORS policy on a forwarded answer, not the origin's", async () => {
    const res = await fetch(`${base}/free`, { headers: { origin: PAGE } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(names(res.headers.get('access-control-expose-headers'))).not.toContain('x-secret');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('vary')).toBe('accept-encoding');
  });

  it('covers the inference, provider, directory and discovery routes', async () => {
    for (const [path, method] of [
      ['/v1/chat/completions', 'POST'],
      ['/v1/projects', 'POST'],
      ['/v1/directory/apis', 'GET'],
      ['/discovery/resources', 'GET'],
      ['/.well-known/x402', 'GET'],
    ] as const) {
      const pre = await fetch(`${h.baseUrl}${path}`, {
        method: 'OPTIONS',
        headers: preflight(method, 'authorization, content-type'),
      });
      expect(pre.status, path).toBe(204);
      expect(pre.headers.get('access-control-allow-origin'), path).toBe('*');
    }
    const models = await fetch(`${h.baseUrl}/v1/models`, { headers: { origin: PAGE } });
    expect(models.status).toBe(200);
    await models.arrayBuffer();
    expect(models.headers.get('access-control-allow-origin')).toBe('*');
    const unknown = await fetch(`${h.baseUrl}/v1/nope`, { headers: { origin: PAGE } });
    expect(unknown.status).toBe(404);
    await unknown.arrayBuffer();
    expect(unknown.headers.get('access-control-allow-origin')).toBe('*');
    expect(unknown.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('lets a page read the OpenAPI description (an editor or generator on another origin)', async () => {
    const doc = await fetch(`${h.baseUrl}/openapi.json`, { headers: { origin: PAGE } });
    expect(doc.status).toBe(200);
    await doc.arrayBuffer();
    expect(doc.headers.get('access-control-allow-origin')).toBe('*');
    const pre = await fetch(`${h.baseUrl}/openapi.json`, {
      method: 'OPTIONS',
      headers: preflight('GET', 'accept'),
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('leaves the operator routes (health, metrics, sandbox) closed to other origins', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const res = await fetch(`${h.baseUrl}${path}`, { headers: { origin: PAGE } });
      await res.arrayBuffer();
      expect(res.headers.get('access-control-allow-origin'), path).toBeNull();
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      const pre = await fetch(`${h.baseUrl}${path}`, { method: 'OPTIONS', headers: preflight('GET') });
      expect(pre.status, path).toBe(204);
      expect(pre.headers.get('access-control-allow-origin'), path).toBeNull();
    }
  });
});

describe('configured origins and nosniff on every response', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
  });

  async function app(env: EnvInput = {}) {
    const config = loadConfig(
      { TOLLGATE_SECRET: 'x'.repeat(40), LOG_LEVEL: 'silent', DATABASE_URL: 'sqlite::memory:', ...env },
      [],
    );
    const store = await openStore(config.databaseUrl);
    const a = await buildApp(assembleDeps(config, store, {}), { logger: false });
    closers.push(async () => {
      await a.close();
      await store.close();
    });
    return a;
  }

  it('reflects only a listed origin, and says the answer varies by Origin', async () => {
    const a = await app({ TOLLGATE_CORS_ORIGINS: `${PAGE}, https://other.example:8443` });
    const listed = await a.inject({ url: '/v1/models', headers: { origin: PAGE } });
    expect(listed.headers['access-control-allow-origin']).toBe(PAGE);
    expect(names(listed.headers['vary'] as string)).toContain('origin');
    const port = await a.inject({ url: '/v1/models', headers: { origin: 'https://other.example:8443' } });
    expect(port.headers['access-control-allow-origin']).toBe('https://other.example:8443');

    const stranger = await a.inject({ url: '/v1/models', headers: { origin: 'https://evil.example' } });
    expect(stranger.statusCode).toBe(200);
    expect(stranger.headers['access-control-allow-origin']).toBeUndefined();
    expect(names(stranger.headers['vary'] as string)).toContain('origin');

    const pre = await a.inject({
      method: 'OPTIONS',
      url: '/p/demo/x',
      headers: { ...preflight('GET'), origin: 'https://evil.example' },
    });
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    const ok = await a.inject({ method: 'OPTIONS', url: '/p/demo/x', headers: preflight('GET') });
    expect(ok.statusCode).toBe(204);
    expect(ok.headers['access-control-allow-origin']).toBe(PAGE);
  });

  it('sends no CORS headers with "none", and still never forwards a preflight', async () => {
    const a = await app({ TOLLGATE_CORS_ORIGINS: 'none' });
    const res = await a.inject({ url: '/v1/models', headers: { origin: PAGE } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const pre = await a.inject({ method: 'OPTIONS', url: '/p/demo/x', headers: preflight('GET') });
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    expect(pre.headers['access-control-allow-methods']).toBeUndefined();
  });

  it('refuses origins that are not bare scheme://host[:port] at boot', () => {
    for (const bad of [
      'https://a.example/path',
      'a.example',
      '*, https://a.example',
      'null',
      'ftp://a.example',
    ]) {
      expect(() => loadConfig({ TOLLGATE_CORS_ORIGINS: bad }, []), bad).toThrow(ConfigError);
    }
    expect(loadConfig({ TOLLGATE_CORS_ORIGINS: 'https://A.example/' }, []).corsOrigins).toEqual([
      'https://a.example',
    ]);
    expect(loadConfig({}, []).corsOrigins).toBe('*');
  });

  it('marks every answer nosniff: errors, 404s, rate limits and hijacked streams', async () => {
    const a = await app({ TOLLGATE_RATE_LIMIT_PER_MIN: '1' });
    // What inference/deliver.ts does for a stream: hijack and write the reply's headers itself.
    a.get('/v1/test-stream', async (_request, reply) => {
      reply.hijack();
      reply.raw.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream',
      });
      reply.raw.end('data: [DONE]\n\n');
    });
    const stream = await a.inject({ url: '/v1/test-stream', headers: { origin: PAGE } });
    expect(stream.headers['x-content-type-options']).toBe('nosniff');
    expect(stream.headers['access-control-allow-origin']).toBe('*');
    const limited = await a.inject({ url: '/p/demo/x', headers: { origin: PAGE } });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['x-content-type-options']).toBe('nosniff');
    expect(limited.headers['access-control-allow-origin']).toBe('*');
    for (const url of ['/healthz', '/nope', '/metrics']) {
      expect((await a.inject(url)).headers['x-content-type-options'], url).toBe('nosniff');
    }
  });
});
