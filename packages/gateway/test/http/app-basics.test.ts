/** The skeleton: health, readiness, metrics, request ids, error shape, rate limiting. */
import { afterEach, describe, expect, it } from 'vitest';
import { assembleDeps, buildApp, pruneStore } from '../../src/app.ts';
import { type EnvInput, loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/open-store.ts';

const ADMIN_TOKEN = 'operator-token-0123456789abcdef';
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
  const deps = assembleDeps(config, store, {});
  const a = await buildApp(deps, { logger: false });
  closers.push(async () => {
    await a.close();
    await store.close();
  });
  return a;
}

describe('gateway basics', () => {
  it('answers /healthz and /readyz', async () => {
    const a = await app();
    expect((await a.inject('/healthz')).json()).toEqual({ status: 'ok' });
    const ready = await a.inject('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
  });

  it('serves Prometheus metrics to the operator only', async () => {
    const a = await app({ TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN });
    await a.inject('/healthz');
    const res = await a.inject({ url: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/plain/);
    expect(res.body).toContain('tollgate_http_requests_total');
    expect((await a.inject('/metrics')).statusCode).toBe(401);
  });

  it('renders unknown routes in the one error shape with a request id', async () => {
    const a = await app();
    const res = await a.inject('/nope');
    expect(res.statusCode).toBe(404);
    const body = res.json();
    expect(body).toMatchObject({
      error: 'not_found',
      message: expect.any(String),
      requestId: expect.any(String),
    });
    expect(res.headers['x-request-id']).toBe(body.requestId);
  });

  it('keeps a safe caller-supplied request id and replaces an unsafe one', async () => {
    const a = await app();
    expect(
      (await a.inject({ url: '/healthz', headers: { 'x-request-id': 'abc-123' } })).headers['x-request-id'],
    ).toBe('abc-123');
    expect(
      (await a.inject({ url: '/healthz', headers: { 'x-request-id': 'bad id\u0001' } })).headers[
        'x-request-id'
      ],
    ).toMatch(/^req_/);
  });

  it('answers a database refusal of a NUL character with 400, not 500', async () => {
    const a = await app();
    a.get('/nul', async () => {
      throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
    });
    const res = await a.inject('/nul');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('limits requests per client address when configured', async () => {
    const a = await app({ TOLLGATE_RATE_LIMIT_PER_MIN: '3' });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await a.inject('/p/demo/x')).statusCode);
    expect(statuses.slice(0, 3)).not.toContain(429);
    const limited = await a.inject('/p/demo/x');
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ error: 'rate_limited' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await a.inject('/healthz')).statusCode).toBe(200);
  });

  it('prunes expired sign-ins in the periodic store clean-up', async () => {
    const config = loadConfig({ TOLLGATE_SECRET: 'x'.repeat(40), LOG_LEVEL: 'silent' }, []);
    const store = await openStore('sqlite::memory:');
    closers.push(() => store.close());
    const now = 1_900_000_000_000;
    await store.auth.createSession({
      tokenHash: 'h',
      owner: { chain: 'solana', address: 'A' },
      createdAtMs: now - 10,
      expiresAtMs: now - 1,
    });
    await store.auth.putChallenge({
      nonce: 'n',
      chain: 'sui',
      address: '0x1',
      message: 'm',
      issuedAtMs: now - 10,
      expiresAtMs: now - 1,
    });
    const warnings: unknown[] = [];
    expect(await pruneStore(store, config, { warn: (o) => warnings.push(o) }, now)).toEqual({
      responses: 0,
      signIns: 2,
    });
    expect(warnings).toEqual([]);
  });
});
