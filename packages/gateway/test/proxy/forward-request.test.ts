import { describe, expect, it } from 'vitest';
import { useForwarding } from './forward-harness.ts';

const { up: upstream, forwarder, request, roundTrip } = useForwarding();

describe('request headers', () => {
  it('strips payment, session, x-service-*, hop-by-hop and client forwarding headers', async () => {
    const { seen, index } = await roundTrip({
      method: 'POST',
      body: Buffer.from('{"a":1}'),
      headers: {
        'x-payment': 'proof',
        'payment-signature': 'v2-payment',
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
      'payment-signature',
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
    expect(upstream().lineValues(index, 'x-forwarded-for')).toEqual(['203.0.113.7']);
    expect(upstream().lineValues(index, 'x-forwarded-host')).toEqual(['gateway.example']);
    expect(upstream().lineValues(index, 'x-forwarded-proto')).toEqual(['https']);
    expect(upstream().lineValues(index, 'x-request-id')).toEqual(['req-123']);
    expect(upstream().lineValues(index, 'host')).toEqual([`127.0.0.1:${upstream().port}`]);
    expect(upstream().lineValues(index, 'content-length')).toEqual(['7']);
    expect(upstream().lineValues(index, 'accept')).toEqual(['application/json']);
    expect(upstream().lineValues(index, 'x-custom')).toEqual(['kept']);
    expect(upstream().lineValues(index, 'user-agent')).toEqual(['client-agent/1.0']);
    expect(seen.body.toString()).toBe('{"a":1}');
  });

  it('sends the configured user agent only when the client sent none', async () => {
    const { index } = await roundTrip();
    expect(upstream().lineValues(index, 'user-agent')).toEqual(['tollgate-test']);
  });

  it('applies bearer auth, replacing the client Authorization', async () => {
    const { index } = await roundTrip({
      headers: { authorization: 'Bearer client-session' },
      auth: { type: 'bearer', secret: 'origin-secret' },
    });
    expect(upstream().lineValues(index, 'authorization')).toEqual(['Bearer origin-secret']);
  });

  it('applies header auth, replacing a client header of the same name in any case', async () => {
    const { index } = await roundTrip({
      headers: { 'x-api-key': 'client-guess', 'X-Api-Key': 'another' },
      auth: { type: 'header', name: 'X-API-Key', secret: 'origin-key' },
    });
    expect(upstream().lineValues(index, 'x-api-key')).toEqual(['origin-key']);
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
    expect(upstream().lineValues(index, 'content-length')).toEqual([String(body.length)]);
    expect(upstream().lineValues(index, 'content-type')).toEqual(['application/octet-stream']);
  });

  it('sends application/json for a body without a content type and keeps the client one verbatim', async () => {
    const a = await roundTrip({ method: 'POST', body: Buffer.from('{"x":1}') });
    expect(upstream().lineValues(a.index, 'content-type')).toEqual(['application/json']);
    const b = await roundTrip({
      method: 'POST',
      body: Buffer.from('{"x":1}'),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(upstream().lineValues(b.index, 'content-type')).toEqual(['application/json; charset=utf-8']);
    expect(b.seen.body.toString()).toBe('{"x":1}');
    const c = await roundTrip({ method: 'GET' });
    expect(upstream().lineValues(c.index, 'content-type')).toEqual([]);
  });

  it.each([
    ['/v2', 'weather/today', '/v2/weather/today'],
    ['/v2/', 'weather/today', '/v2/weather/today'],
    ['/v2//', '/weather/today', '/v2/weather/today'],
    ['', 'weather', '/weather'],
    ['/', 'a/b', '/a/b'],
    ['/v2', '', '/v2/'],
  ])('joins base path %j and endpoint path %j as %s', async (basePath, path, expected) => {
    const { seen } = await roundTrip({ baseUrl: `${upstream().base}${basePath}`, path, query: 'x=1' });
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
    expect(upstream().seen).toHaveLength(0);
  });

  it('reuses one keep-alive connection for sequential requests', async () => {
    const before = upstream().connections;
    await roundTrip();
    await roundTrip();
    await roundTrip();
    expect(upstream().connections - before).toBeLessThanOrEqual(1);
  });
});
