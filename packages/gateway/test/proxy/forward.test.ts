import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CLIENT_ABORTED_CODE,
  classifyUpstreamError,
  createForwarder,
  type ForwardRequest,
  type ForwardResult,
  readCapped,
  UPSTREAM_TIMEOUT_CODE,
  UpstreamError,
} from '../../src/proxy/index.ts';
import { closedPort, startUpstream, type Upstream } from './upstream.ts';

let up: Upstream;
const forwarder = createForwarder({
  allowPrivate: true,
  maxResponseBytes: 64 * 1024,
  userAgent: 'tollgate-test',
});

beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await forwarder.close();
  await up.close();
});
afterEach(() => {
  up.seen.length = 0;
  up.handle((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
});

function request(over: Partial<ForwardRequest> = {}): ForwardRequest {
  return {
    baseUrl: up.base,
    path: 'echo',
    query: '',
    method: 'GET',
    headers: {},
    body: null,
    auth: { type: 'none' },
    timeoutMs: 5_000,
    clientIp: '203.0.113.7',
    forwardedProto: 'https',
    forwardedHost: 'gateway.example',
    requestId: 'req-123',
    ...over,
  };
}

async function ok(result: Promise<ForwardResult>) {
  const r = await result;
  if (!r.ok) throw new Error(`forward failed: ${r.error} ${r.detail}`);
  return r;
}

/** Forward, read the whole body, and return what the upstream saw. */
async function roundTrip(over: Partial<ForwardRequest> = {}) {
  const r = await ok(forwarder.forward(request(over)));
  const body = await readCapped(r.body, 1 << 20);
  const seen = up.seen.at(-1);
  if (!seen) throw new Error('upstream saw nothing');
  return { r, body, seen, index: up.seen.length - 1 };
}

describe('request headers', () => {
  it('strips payment, session, x-service-*, hop-by-hop and client forwarding headers', async () => {
    const { seen, index } = await roundTrip({
      method: 'POST',
      body: Buffer.from('{"a":1}'),
      headers: {
        'x-payment': 'proof',
        authorization: 'Bearer session-token',
        cookie: 'sid=abc',
        'proxy-authorization': 'Basic eA==',
        'x-service-token': 'internal',
        'x-service-user': 'u1',
        connection: 'keep-alive, x-nominated',
        'x-nominated': 'hop',
        'keep-alive': 'timeout=5',
        te: 'trailers',
        trailer: 'x-foo',
        'proxy-connection': 'keep-alive',
        upgrade: 'websocket',
        expect: '100-continue',
        'x-forwarded-for': '10.9.9.9',
        'x-forwarded-host': 'evil.example',
        'x-forwarded-proto': 'http',
        forwarded: 'for=10.9.9.9',
        'x-real-ip': '10.9.9.9',
        'x-request-id': 'client-chosen',
        host: 'evil.example',
        'content-length': '999',
        'content-type': 'application/json',
        accept: 'application/json',
        'x-custom': 'kept',
        'user-agent': 'client-agent/1.0',
      },
    });
    const names = seen.lines.map(([n]) => n);
    for (const gone of [
      'x-payment',
      'authorization',
      'cookie',
      'proxy-authorization',
      'x-service-token',
      'x-service-user',
      'x-nominated',
      'keep-alive',
      'te',
      'trailer',
      'proxy-connection',
      'upgrade',
      'expect',
      'forwarded',
      'x-real-ip',
    ]) {
      expect(names, gone).not.toContain(gone);
    }
    expect(up.lineValues(index, 'x-forwarded-for')).toEqual(['203.0.113.7']);
    expect(up.lineValues(index, 'x-forwarded-host')).toEqual(['gateway.example']);
    expect(up.lineValues(index, 'x-forwarded-proto')).toEqual(['https']);
    expect(up.lineValues(index, 'x-request-id')).toEqual(['req-123']);
    expect(up.lineValues(index, 'host')).toEqual([`127.0.0.1:${up.port}`]);
    expect(up.lineValues(index, 'content-length')).toEqual(['7']);
    expect(up.lineValues(index, 'accept')).toEqual(['application/json']);
    expect(up.lineValues(index, 'x-custom')).toEqual(['kept']);
    expect(up.lineValues(index, 'user-agent')).toEqual(['client-agent/1.0']);
    expect(seen.body.toString()).toBe('{"a":1}');
  });

  it('sends the configured user agent only when the client sent none', async () => {
    const { index } = await roundTrip();
    expect(up.lineValues(index, 'user-agent')).toEqual(['tollgate-test']);
  });

  it('applies bearer auth, replacing the client Authorization', async () => {
    const { index } = await roundTrip({
      headers: { authorization: 'Bearer client-session' },
      auth: { type: 'bearer', secret: 'origin-secret' },
    });
    expect(up.lineValues(index, 'authorization')).toEqual(['Bearer origin-secret']);
  });

  it('applies header auth, replacing a client header of the same name in any case', async () => {
    const { index } = await roundTrip({
      headers: { 'x-api-key': 'client-guess', 'X-Api-Key': 'another' },
      auth: { type: 'header', name: 'X-API-Key', secret: 'origin-key' },
    });
    expect(up.lineValues(index, 'x-api-key')).toEqual(['origin-key']);
  });

  it('applies query auth, replacing client parameters of the same name however they are encoded', async () => {
    const { seen } = await roundTrip({
      query: 'a=1&api_key=evil&api%5Fkey=evil2&b=%C3%A9&api_key',
      auth: { type: 'query', name: 'api_key', secret: 's3cr3t/+=' },
    });
    expect(seen.url).toBe('/echo?a=1&b=%C3%A9&api_key=s3cr3t%2F%2B%3D');
    expect(new URL(seen.url, 'http://x').searchParams.getAll('api_key')).toEqual(['s3cr3t/+=']);
  });

  it('adds query auth to a request without a query', async () => {
    const { seen } = await roundTrip({ auth: { type: 'query', name: 'key', secret: 'k' } });
    expect(seen.url).toBe('/echo?key=k');
  });
});

describe('request target and body', () => {
  it('forwards the query byte-for-byte, repeated and non-ASCII parameters included', async () => {
    const query = 'q=%C3%A9t%C3%A9&q=%E2%82%AC&q=3&plus=a+b&empty=&flag&slash=%2F&sp=a%20b&semi=a;b';
    const { seen } = await roundTrip({ query });
    expect(seen.url).toBe(`/echo?${query}`);
  });

  it('forwards the body bytes unchanged (UTF-8 and binary)', async () => {
    const body = Buffer.concat([
      Buffer.from('{"city":"Zürich","emoji":"🦀","n":1.50}', 'utf8'),
      Buffer.from([0x00, 0xff, 0x0d, 0x0a, 0x80]),
    ]);
    const { seen, index } = await roundTrip({
      method: 'PUT',
      body,
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(seen.method).toBe('PUT');
    expect(seen.body.equals(body)).toBe(true);
    expect(up.lineValues(index, 'content-length')).toEqual([String(body.length)]);
    expect(up.lineValues(index, 'content-type')).toEqual(['application/octet-stream']);
  });

  it('sends application/json for a body without a content type and keeps the client one verbatim', async () => {
    const a = await roundTrip({ method: 'POST', body: Buffer.from('{"x":1}') });
    expect(up.lineValues(a.index, 'content-type')).toEqual(['application/json']);
    const b = await roundTrip({
      method: 'POST',
      body: Buffer.from('{"x":1}'),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(up.lineValues(b.index, 'content-type')).toEqual(['application/json; charset=utf-8']);
    expect(b.seen.body.toString()).toBe('{"x":1}');
    const c = await roundTrip({ method: 'GET' });
    expect(up.lineValues(c.index, 'content-type')).toEqual([]);
  });

  it.each([
    ['/v2', 'weather/today', '/v2/weather/today'],
    ['/v2/', 'weather/today', '/v2/weather/today'],
    ['/v2//', '/weather/today', '/v2/weather/today'],
    ['', 'weather', '/weather'],
    ['/', 'a/b', '/a/b'],
    ['/v2', '', '/v2/'],
  ])('joins base path %j and endpoint path %j as %s', async (basePath, path, expected) => {
    const { seen } = await roundTrip({ baseUrl: `${up.base}${basePath}`, path, query: 'x=1' });
    expect(seen.url).toBe(`${expected}?x=1`);
  });

  it('refuses a target that could escape the path (query or fragment characters in the path)', async () => {
    for (const path of ['a?b=1', 'a#frag']) {
      expect(await forwarder.forward(request({ path }))).toEqual({
        ok: false,
        error: 'upstream_error',
        detail: 'invalid_request_target',
      });
    }
    expect(up.seen).toHaveLength(0);
  });

  it('reuses one keep-alive connection for sequential requests', async () => {
    const before = up.connections;
    await roundTrip();
    await roundTrip();
    await roundTrip();
    expect(up.connections - before).toBeLessThanOrEqual(1);
  });
});

describe('responses', () => {
  it('returns a redirect as-is with its location and never follows it', async () => {
    up.handle((req, res) => {
      if (req.url === '/echo') res.writeHead(302, { location: `${up.base}/elsewhere` }).end();
      else res.writeHead(200).end('followed');
    });
    const { r, body } = await roundTrip();
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe(`${up.base}/elsewhere`);
    expect(body).toEqual(Buffer.alloc(0));
    expect(up.seen.map((s) => s.url)).toEqual(['/echo']);
  });

  it('strips hop-by-hop and domain-scoped response headers and passes the rest', async () => {
    up.handle((_req, res) => {
      res.setHeader('set-cookie', ['a=1; Path=/', 'b=2']);
      res.setHeader('connection', 'x-hop');
      res.setHeader('x-hop', 'gone');
      res.setHeader('keep-alive', 'timeout=5');
      res.setHeader('alt-svc', 'h3=":443"');
      res.setHeader('strict-transport-security', 'max-age=1');
      res.setHeader('clear-site-data', '"cookies"');
      res.setHeader('x-payment-response', 'forged');
      res.setHeader('content-type', 'application/json');
      res.setHeader('x-ratelimit-remaining', '9');
      res.writeHead(201).end('{"created":true}');
    });
    const { r, body } = await roundTrip();
    expect(r.status).toBe(201);
    for (const gone of [
      'set-cookie',
      'connection',
      'x-hop',
      'keep-alive',
      'alt-svc',
      'strict-transport-security',
      'clear-site-data',
      'x-payment-response',
      'transfer-encoding',
    ]) {
      expect(r.headers, gone).not.toHaveProperty(gone);
    }
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['x-ratelimit-remaining']).toBe('9');
    expect(body.toString()).toBe('{"created":true}');
  });

  it('passes 4xx and 5xx statuses through as successful exchanges', async () => {
    up.handle((_req, res) => {
      res.writeHead(503, { 'retry-after': '3' }).end('busy');
    });
    const { r, body } = await roundTrip();
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBe('3');
    expect(body.toString()).toBe('busy');
  });
});

describe('response size caps', () => {
  it('readCapped returns the bytes under the cap and too_large over it', async () => {
    const payload = Buffer.alloc(500, 0x61);
    up.handle((_req, res) => {
      res.writeHead(200).end(payload);
    });
    const small = await ok(forwarder.forward(request()));
    expect(await readCapped(small.body, 100)).toBe('too_large');
    expect(small.body.destroyed).toBe(true);
    const fits = await ok(forwarder.forward(request()));
    expect(await readCapped(fits.body, 500)).toEqual(payload);
  });

  it('fails up front when the declared length exceeds maxResponseBytes', async () => {
    up.handle((_req, res) => {
      res.writeHead(200, { 'content-length': String(100 * 1024) }).end(Buffer.alloc(100 * 1024));
    });
    expect(await forwarder.forward(request())).toEqual({
      ok: false,
      error: 'upstream_error',
      detail: 'TOLLGATE_RESPONSE_TOO_LARGE',
    });
  });

  it('cuts a chunked body that grows past maxResponseBytes', async () => {
    up.handle((_req, res) => {
      res.writeHead(200);
      for (let i = 0; i < 20; i++) res.write(Buffer.alloc(8 * 1024, 0x62));
      res.end();
    });
    const r = await ok(forwarder.forward(request()));
    expect(r.headers['content-length']).toBeUndefined();
    expect(await readCapped(r.body, 1 << 20)).toBe('too_large');
  });
});

describe('failures', () => {
  it('times out when the origin never sends headers', async () => {
    up.handle(() => {});
    expect(await forwarder.forward(request({ timeoutMs: 150 }))).toEqual({
      ok: false,
      error: 'upstream_timeout',
      detail: UPSTREAM_TIMEOUT_CODE,
    });
  });

  it('times out on a body that stalls after the headers, as an error on the stream', async () => {
    up.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    });
    const r = await ok(forwarder.forward(request({ timeoutMs: 300 })));
    expect(r.status).toBe(200);
    const err = await readCapped(r.body, 1 << 20).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UpstreamError);
    expect(classifyUpstreamError(err)).toEqual({ error: 'upstream_timeout', detail: UPSTREAM_TIMEOUT_CODE });
  });

  it('reports connection refused as upstream_error', async () => {
    const port = await closedPort();
    expect(await forwarder.forward(request({ baseUrl: `http://127.0.0.1:${port}` }))).toEqual({
      ok: false,
      error: 'upstream_error',
      detail: 'ECONNREFUSED',
    });
  });

  it('reports a connection closed before the response as upstream_error', async () => {
    up.handle((req) => {
      req.socket.destroy();
    });
    const r = await forwarder.forward(request({ method: 'POST', body: Buffer.from('{}') }));
    expect(r).toMatchObject({ ok: false, error: 'upstream_error' });
  });

  it('reports a TCP reset as upstream_error', async () => {
    up.handle((req) => {
      req.socket.resetAndDestroy();
    });
    const r = await forwarder.forward(request());
    expect(r).toMatchObject({ ok: false, error: 'upstream_error' });
  });

  it('reports a reset in the middle of the body as an upstream_error on the stream', async () => {
    up.handle((req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('half', () => req.socket.resetAndDestroy());
    });
    const r = await ok(forwarder.forward(request()));
    const err = await readCapped(r.body, 1 << 20).then(
      () => null,
      (e: unknown) => e,
    );
    expect(classifyUpstreamError(err).error).toBe('upstream_error');
  });

  it('refuses an http base URL when private origins are not allowed', async () => {
    const strict = createForwarder({ allowPrivate: false, maxResponseBytes: 1024 });
    try {
      expect(await strict.forward(request())).toEqual({
        ok: false,
        error: 'upstream_error',
        detail: 'scheme_not_allowed',
      });
      expect(up.seen).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });
});

describe('probe', () => {
  it('is healthy on any answer below 500 and unhealthy on 5xx, refusal or a blocked origin', async () => {
    up.handle((req, res) => {
      res.writeHead(req.url === '/broken' ? 502 : 404).end();
    });
    expect(await forwarder.probe(`${up.base}/v2`)).toBe(true);
    expect(up.seen.at(-1)).toMatchObject({ method: 'HEAD', url: '/v2' });
    expect(await forwarder.probe(`${up.base}/broken`)).toBe(false);
    expect(await forwarder.probe(`http://127.0.0.1:${await closedPort()}`)).toBe(false);
    expect(await forwarder.probe('not a url')).toBe(false);
    const strict = createForwarder({ allowPrivate: false, maxResponseBytes: 1024 });
    try {
      const before = up.connections;
      expect(await strict.probe(`https://127.0.0.1:${up.port}`)).toBe(false);
      expect(up.connections).toBe(before);
    } finally {
      await strict.close();
    }
  });

  it('is unhealthy when the origin does not answer in time', async () => {
    up.handle(() => {});
    expect(await forwarder.probe(up.base, 100)).toBe(false);
  });
});

describe('client abort', () => {
  it('gives up before the headers when the client goes away', async () => {
    up.handle(() => {});
    const ac = new AbortController();
    const pending = forwarder.forward(request({ signal: ac.signal }));
    await waitFor(() => up.seen.length === 1);
    ac.abort();
    expect(await pending).toEqual({ ok: false, error: 'upstream_error', detail: CLIENT_ABORTED_CODE });
  });

  it('destroys a streaming body and the upstream exchange when the client goes away', async () => {
    let upstreamClosed: Promise<unknown> = Promise.resolve();
    up.handle((_req, res) => {
      upstreamClosed = once(res, 'close');
      res.writeHead(200);
      res.write('first chunk');
    });
    const ac = new AbortController();
    const r = await ok(forwarder.forward(request({ signal: ac.signal, timeoutMs: 10_000 })));
    const errored = once(r.body, 'error');
    ac.abort();
    const [err] = await errored;
    expect(r.body.destroyed).toBe(true);
    expect(classifyUpstreamError(err)).toEqual({ error: 'upstream_error', detail: CLIENT_ABORTED_CODE });
    await upstreamClosed;
  });

  it('does not even dial when the client is already gone', async () => {
    const ac = new AbortController();
    ac.abort();
    expect(await forwarder.forward(request({ signal: ac.signal }))).toMatchObject({ ok: false });
    expect(up.seen).toHaveLength(0);
  });
});

async function waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!cond()) throw new Error('condition never became true');
}
