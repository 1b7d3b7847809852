/**
 * The fast path (src/http/fast-unpaid.ts) answers unpaid /p requests before Fastify (the
 * 402, and the forward of a free endpoint); it must answer exactly as the route does. Each request below goes once over real HTTP to the
 * listening gateway (where the fast path sits in front of Fastify) and once through
 * app.inject (which never reaches the server, so always takes the Fastify route), and
 * the two answers are compared: status, header names and values, body, the access-log
 * line and the metrics it counted. Values that differ per request by design (nonce,
 * times, signed tokens, hashes, generated request ids, the line's ms) are normalised.
 * Each case also says whether the fast path is the one that answered it over HTTP.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fastUnpaidAnswered } from '../../src/http/server.ts';
import { publishProject } from '../../src/marketplace/publish.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

const PAGE = 'https://app.example.com';
/** The gateways compared: every access line logged, one listed page origin, no rate limit in the way. */
const PARITY_ENV = {
  // Debug: the access line of every answer (a 2xx's is debug).
  LOG_LEVEL: 'debug',
  TOLLGATE_CORS_ORIGINS: PAGE,
  TOLLGATE_RATE_LIMIT_PER_MIN: '100000',
  // A price of 0 is then free (forwarded, no 402).
  PLATFORM_FEE_MIN: '0',
};

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

interface Case {
  name: string;
  method: string;
  /** The path after /p/<slug>/ (the slug is the case's project). */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  project?: 'shop' | 'v2' | 'unknown';
  /** Whether the fast path answers it (else Fastify does). */
  fast: boolean;
  status: number;
}

/** Node's own connection headers; app.inject has none of them. */
const TRANSPORT = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
/** Fields that change with every 402 (fresh nonce, times, the signed token, hashes). */
const VARYING = new Set([
  'nonce',
  'memo',
  'expiresAt',
  'issuedAt',
  'requestHash',
  'paymentRequirementId',
  'maxTimeoutSeconds',
]);
const GENERATED_ID = /^req_[0-9a-f-]{36}$/;

function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = VARYING.has(k) ? '<varies>' : k === 'requestId' ? normaliseId(v) : normalise(v);
    }
    return out;
  }
  return value;
}

function normaliseId(v: unknown): unknown {
  return typeof v === 'string' && GENERATED_ID.test(v) ? '<generated>' : v;
}

function normaliseAnswer(a: Answer): { status: number; headers: Record<string, unknown>; body: unknown } {
  const headers: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(a.headers)) {
    if (TRANSPORT.has(k)) continue;
    if (k === 'x-request-id') headers[k] = normaliseId(v);
    else if (k === 'payment-required')
      headers[k] = normalise(JSON.parse(Buffer.from(v, 'base64').toString('utf8')));
    // Its value follows the body's length (token lengths vary); checked against the body below.
    else if (k === 'content-length') headers[k] = '<length>';
    else headers[k] = v;
  }
  // A scripted upstream numbers its calls of a URL (the two requests of a case are calls 1 and 2).
  let body: unknown = a.body.replace(/^scripted call=\d+ /, 'scripted call=<n> ');
  try {
    body = normalise(JSON.parse(a.body));
  } catch {
    // Not JSON: compared as it is.
  }
  return { status: a.status, headers, body };
}

function overHttp(
  base: string,
  c: { method: string; url: string; headers: Record<string, string>; body?: string },
) {
  return new Promise<Answer>((resolve, reject) => {
    const req = httpRequest(
      `${base}${c.url}`,
      { method: c.method, headers: c.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) headers[k] = String(v);
          resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString('utf8') });
        });
      },
    );
    req.on('error', reject);
    req.end(c.body);
  });
}

async function viaInject(
  h: Harness,
  c: { method: string; url: string; headers: Record<string, string>; body?: string },
) {
  const res = await h.app.inject({
    method: c.method as 'GET',
    url: c.url,
    headers: c.headers,
    ...(c.body !== undefined ? { payload: c.body } : {}),
  });
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) headers[k] = String(v);
  return { status: res.statusCode, headers, body: res.body };
}

/** Counters and histogram counts of the metrics the access log updates, as label → value. */
async function metricValues(h: Harness): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const { httpRequests, httpDuration, paymentRequired, paymentsRejected, upstream, upstreamDuration } =
    h.deps.metrics;
  for (const [name, metric] of Object.entries({
    httpRequests,
    httpDuration,
    paymentRequired,
    paymentsRejected,
    upstream,
    upstreamDuration,
  })) {
    for (const v of (await metric.get()).values) {
      const n = (v as { metricName?: string }).metricName ?? name;
      if (n.endsWith('_sum') || n.endsWith('_bucket')) continue;
      out[`${n}${JSON.stringify(v.labels)}`] = v.value;
    }
  }
  return out;
}

function delta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const d: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) if (v !== (before[k] ?? 0)) d[k] = v - (before[k] ?? 0);
  return d;
}

/** The access-log line of request `id`, once written (it is written when the response finishes). */
async function accessLine(lines: string[], id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const found = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l['msg'] === 'request' && l['reqId'] === id);
    if (found) {
      const { time: _t, pid: _p, hostname: _h, ms, reqId: _r, ...rest } = found;
      expect(typeof ms).toBe('number');
      return rest;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no access line for ${id}`);
}

async function compare(
  h: Harness,
  lines: string[],
  c: { method: string; url: string; headers: Record<string, string>; body?: string },
) {
  const fastBefore = fastUnpaidAnswered(h.app);
  const m0 = await metricValues(h);
  const real = await overHttp(h.baseUrl, c);
  const realLine = await accessLine(lines, real.headers['x-request-id'] ?? '');
  const m1 = await metricValues(h);
  const fast = fastUnpaidAnswered(h.app) - fastBefore;
  const routed = await viaInject(h, c);
  const routedLine = await accessLine(lines, routed.headers['x-request-id'] ?? '');
  const m2 = await metricValues(h);
  expect(fastUnpaidAnswered(h.app) - fastBefore - fast, 'app.inject never takes the fast path').toBe(0);
  for (const a of [real, routed]) {
    if (a.headers['content-length'] !== undefined && c.method !== 'HEAD')
      expect(Number(a.headers['content-length'])).toBe(Buffer.byteLength(a.body));
  }
  expect(normaliseAnswer(real)).toEqual(normaliseAnswer(routed));
  // The same header order as a Fastify reply writes them.
  expect(Object.keys(real.headers).filter((k) => !TRANSPORT.has(k))).toEqual(
    Object.keys(routed.headers).filter((k) => !TRANSPORT.has(k)),
  );
  expect(realLine).toEqual(routedLine);
  expect(delta(m0, m1)).toEqual(delta(m1, m2));
  return { real, fast: fast === 1 };
}

describe('the fast 402 answers exactly as the marketplace route', () => {
  let h: Harness;
  const lines: string[] = [];
  let v2Slug = '';

  beforeAll(async () => {
    h = await startHarness({
      logLines: lines,
      env: PARITY_ENV,
    });
    v2Slug = `v2-${randomBytes(3).toString('hex')}`;
    await publishProject(h.store, {
      slug: v2Slug,
      name: 'v2 shop',
      x402Exact: true,
      owner: { chain: 'solana', address: h.recipients.solana.provider },
      api: { name: 'upstream', baseUrl: `${h.upstream.url}/base` },
      endpoints: [
        { method: 'GET', path: 'items', price: '0.01', timeoutMs: 2000 },
        { method: 'HEAD', path: 'items', price: '0.01', timeoutMs: 2000 },
        { method: 'DELETE', path: 'items', price: '0.01', timeoutMs: 2000 },
        // A 402 body that is not all ASCII (the fast path writes an ASCII one as Latin-1).
        { method: 'GET', path: 'meteo', price: '0.01', timeoutMs: 2000, description: 'Météo ✓ für 🌧' },
      ],
      rails: [
        { chain: 'solana', network: h.config.chainNetwork, providerRecipient: h.recipients.solana.provider },
        { chain: 'sui', network: h.config.chainNetwork, providerRecipient: h.recipients.sui.provider },
      ],
    });
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  const cases: Case[] = [
    { name: 'plain GET', method: 'GET', path: 'items', fast: true, status: 402 },
    { name: 'GET with a query', method: 'GET', path: 'items?q=1&b=two', fast: true, status: 402 },
    {
      name: 'GET with a listed Origin',
      method: 'GET',
      path: 'items',
      headers: { origin: PAGE },
      fast: true,
      status: 402,
    },
    {
      name: 'GET with another Origin',
      method: 'GET',
      path: 'items',
      headers: { origin: 'https://other.example' },
      fast: true,
      status: 402,
    },
    {
      name: 'a valid x-request-id',
      method: 'GET',
      path: 'items',
      headers: { 'x-request-id': `client-${randomBytes(4).toString('hex')}` },
      fast: true,
      status: 402,
    },
    {
      name: 'an invalid x-request-id',
      method: 'GET',
      path: 'items',
      headers: { 'x-request-id': 'not valid!' },
      fast: true,
      status: 402,
    },
    { name: 'v2 opted-in project', method: 'GET', path: 'items', project: 'v2', fast: true, status: 402 },
    { name: 'HEAD endpoint', method: 'HEAD', path: 'items', project: 'v2', fast: true, status: 402 },
    {
      name: 'an endpoint whose description is not ASCII',
      method: 'GET',
      path: 'meteo',
      project: 'v2',
      fast: true,
      status: 402,
    },
    {
      name: 'DELETE without a body',
      method: 'DELETE',
      path: 'items',
      project: 'v2',
      fast: true,
      status: 402,
    },
    {
      name: 'POST with Content-Length 0',
      method: 'POST',
      path: 'orders/new',
      headers: { 'content-length': '0' },
      fast: true,
      status: 402,
    },
    { name: 'HEAD of a GET-only endpoint', method: 'HEAD', path: 'items', fast: false, status: 404 },
    { name: 'unknown slug', method: 'GET', path: 'items', project: 'unknown', fast: false, status: 404 },
    { name: 'disabled endpoint', method: 'GET', path: 'off', fast: false, status: 503 },
    { name: 'price 0 endpoint', method: 'GET', path: 'free', fast: true, status: 200 },
    {
      name: 'price 0 endpoint with a listed Origin',
      method: 'GET',
      path: 'free?x=1',
      headers: { origin: PAGE },
      fast: true,
      status: 200,
    },

    { name: 'unknown endpoint', method: 'GET', path: 'nothing', fast: false, status: 404 },
    {
      name: 'X-PAYMENT garbage',
      method: 'GET',
      path: 'items',
      headers: { 'x-payment': 'garbage' },
      fast: false,
      status: 400,
    },
    {
      name: 'PAYMENT-SIGNATURE garbage',
      method: 'GET',
      path: 'items',
      headers: { 'payment-signature': 'garbage' },
      project: 'v2',
      fast: false,
      status: 400,
    },
    {
      name: 'POST with a body',
      method: 'POST',
      path: 'orders/new',
      headers: { 'content-type': 'application/json' },
      body: '{"n":1}',
      fast: false,
      status: 402,
    },
    { name: 'a percent-encoded path', method: 'GET', path: 'it%65ms', fast: false, status: 404 },
    { name: 'an empty segment', method: 'GET', path: 'a//items', fast: false, status: 400 },
    {
      name: 'a CORS preflight',
      method: 'OPTIONS',
      path: 'items',
      headers: { origin: PAGE, 'access-control-request-method': 'GET' },
      fast: false,
      status: 204,
    },
  ];

  for (const c of cases) {
    it(`${c.name}: ${c.fast ? 'the fast path' : 'Fastify'} answers ${c.status}, the same as the route`, async () => {
      const slug =
        c.project === 'v2'
          ? v2Slug
          : c.project === 'unknown'
            ? `nope-${randomBytes(3).toString('hex')}`
            : h.project.slug;
      const url = `/p/${slug}/${c.path}`;
      const req = {
        method: c.method,
        url,
        headers: c.headers ?? {},
        ...(c.body !== undefined ? { body: c.body } : {}),
      };
      // A first request loads the project's catalogue snapshot (the fast path needs it cached).
      await h.app.inject({ method: 'GET', url: `/p/${slug}/items` });
      const { real, fast } = await compare(h, lines, req);
      expect(real.status).toBe(c.status);
      expect(fast).toBe(c.fast);
      if (c.project === 'v2') {
        if (c.fast) expect(real.headers['payment-required']).toBeDefined();
      } else expect(real.headers['payment-required']).toBeUndefined();
      if (c.headers?.['x-request-id'] === 'not valid!')
        expect(real.headers['x-request-id']).toMatch(GENERATED_ID);
      else if (c.headers?.['x-request-id'])
        expect(real.headers['x-request-id']).toBe(c.headers['x-request-id']);
    });
  }

  it('a 402 from the fast path is one the gateway accepts payment for (its token verifies)', async () => {
    const real = await overHttp(h.baseUrl, { method: 'GET', url: `/p/${h.project.slug}/items`, headers: {} });
    const body = JSON.parse(real.body) as { paymentRequirementId: string };
    expect(h.deps.tokens.verify(body.paymentRequirementId).ok).toBe(true);
  });
});

describe('the fast path forwards a free endpoint exactly as the marketplace route', () => {
  let h: Harness;
  const lines: string[] = [];

  /** A project whose free endpoints take other methods than GET. */
  let methods = '';

  beforeAll(async () => {
    h = await startHarness({
      logLines: lines,
      env: PARITY_ENV,
    });
    methods = `methods-${randomBytes(3).toString('hex')}`;
    await publishProject(h.store, {
      slug: methods,
      name: 'free methods',
      owner: { chain: 'solana', address: h.recipients.solana.provider },
      api: { name: 'upstream', baseUrl: h.upstream.url },
      endpoints: [
        { method: 'HEAD', path: 'free', price: '0', timeoutMs: 2000 },
        { method: 'DELETE', path: 'free', price: '0', timeoutMs: 2000 },
        { method: 'OPTIONS', path: 'free', price: '0', timeoutMs: 2000 },
      ],
      rails: [
        { chain: 'solana', network: h.config.chainNetwork, providerRecipient: h.recipients.solana.provider },
      ],
    });
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  for (const method of ['HEAD', 'DELETE', 'OPTIONS']) {
    it(`a free ${method} endpoint: the fast path forwards it, the same as the route`, async () => {
      h.upstream.mode = 'scripted';
      const url = `/p/${methods}/free?fault=ok&case=${randomBytes(3).toString('hex')}`;
      await h.app.inject({ method: 'GET', url: `/p/${methods}/free` });
      const { real, fast } = await compare(h, lines, { method, url, headers: { origin: PAGE } });
      expect(real.status).toBe(200);
      expect(fast).toBe(true);
      const seen = h.upstream.answers.filter((a) => a.url.endsWith(url.slice(url.indexOf('?'))));
      expect(seen).toHaveLength(2);
    });
  }

  /** `fault`: the scripted upstream's answer (test-upstream.ts), or the upstream's 'big' mode (256 KB). */
  const cases: { fault: string; status: number; headers?: Record<string, string>; method?: string }[] = [
    { fault: 'ok', status: 200 },
    { fault: 'ok', status: 200, headers: { origin: PAGE } },
    { fault: 'ok', status: 200, headers: { origin: 'https://other.example' } },
    { fault: 'chunked', status: 200 },
    { fault: 'slow3x10', status: 200, headers: { origin: PAGE } },
    { fault: 'status500', status: 500 },
    { fault: 'status404', status: 404 },
    { fault: 'status204', status: 204 },
    { fault: 'status304', status: 304 },
    { fault: 'reset', status: 502 },
    { fault: 'cut', status: 502 },
    { fault: 'hang', status: 504 },
    { fault: 'big', status: 200 },
  ];
  for (const c of cases) {
    const name = `${c.fault}${c.headers ? ` with Origin ${c.headers['origin']}` : ''}`;
    it(`upstream ${name}: the fast path answers ${c.status}, the same as the route`, async () => {
      h.upstream.mode = c.fault === 'big' ? 'big' : 'scripted';
      const url = `/p/${h.project.slug}/free?fault=${c.fault}&case=${randomBytes(3).toString('hex')}`;
      await h.app.inject({ method: 'GET', url: `/p/${h.project.slug}/items` });
      const { real, fast } = await compare(h, lines, { method: 'GET', url, headers: c.headers ?? {} });
      expect(real.status).toBe(c.status);
      expect(fast).toBe(true);
      if (c.fault === 'big') expect(real.body.length).toBe(256 * 1024);
    }, 20_000);
  }
});

describe('the fast 402 and the rate limit', () => {
  let h: Harness;
  const lines: string[] = [];

  beforeAll(async () => {
    h = await startHarness({ logLines: lines, env: { LOG_LEVEL: 'info', TOLLGATE_RATE_LIMIT_PER_MIN: '3' } });
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it('spends the caller’s tokens, and a refused caller gets the route’s 429', async () => {
    const url = `/p/${h.project.slug}/items`;
    // Loads the catalogue (one token).
    expect((await overHttp(h.baseUrl, { method: 'GET', url, headers: {} })).status).toBe(402);
    const before = fastUnpaidAnswered(h.app);
    expect((await overHttp(h.baseUrl, { method: 'GET', url, headers: {} })).status).toBe(402);
    expect((await overHttp(h.baseUrl, { method: 'GET', url, headers: {} })).status).toBe(402);
    expect(fastUnpaidAnswered(h.app) - before).toBe(2);
    // Tokens spent by the fast path count: the fourth request is refused (app.inject shares the bucket).
    const { real, fast } = await compare(h, lines, { method: 'GET', url, headers: {} });
    expect(real.status).toBe(429);
    expect(real.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(fast).toBe(false);
  });
});
