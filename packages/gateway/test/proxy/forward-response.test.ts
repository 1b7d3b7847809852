import { getEventListeners, once } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  CLIENT_ABORTED_CODE,
  classifyUpstreamError,
  createForwarder,
  filterResponseHeaders,
  readCapped,
  UPSTREAM_TIMEOUT_CODE,
  UpstreamError,
} from '../../src/proxy/index.ts';
import { oldBytesPerAsyncCall } from '../support/old-generation.ts';
import { ok, useForwarding, waitFor } from './forward-harness.ts';
import { closedPort, withForgetfulOrigin } from './upstream.ts';

const { up: upstream, forwarder, request, roundTrip } = useForwarding();

describe('responses', () => {
  it('returns a redirect as-is with its location and never follows it', async () => {
    upstream().handle((req, res) => {
      if (req.url === '/echo') res.writeHead(302, { location: `${upstream().base}/elsewhere` }).end();
      else res.writeHead(200).end('followed');
    });
    const { r, body } = await roundTrip();
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe(`${upstream().base}/elsewhere`);
    expect(body).toEqual(Buffer.alloc(0));
    expect(upstream().seen.map((s) => s.url)).toEqual(['/echo']);
  });

  it('strips hop-by-hop and domain-scoped response headers and passes the rest', async () => {
    upstream().handle((_req, res) => {
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

  it("strips the gateway's own headers (request id, receipts, x-tollgate-*) whatever their case", async () => {
    const forged: Array<[string, string]> = [
      ['X-Request-Id', 'req_spoofed'],
      ['X-PAYMENT-RESPONSE', 'forged-v1-receipt'],
      ['Payment-Response', 'forged-v2-receipt'],
      ['PAYMENT-REQUIRED', 'forged-v2-requirement'],
      ['X-Tollgate-Replay', 'true'],
      ['x-tollgate-not-retained', '1'],
      ['X-TOLLGATE-Whatever', 'x'],
    ];
    upstream().handle((_req, res) => {
      const lines = ['content-type', 'text/plain', 'X-Tollgater', 'kept', 'x-requested-with', 'kept'];
      for (const [name, value] of forged) lines.push(name, value);
      res.writeHead(200, lines).end('ok');
    });
    const { r } = await roundTrip();
    for (const [name] of forged) {
      expect(r.headers, name).not.toHaveProperty(name.toLowerCase());
      expect(r.headers, name).not.toHaveProperty(name);
    }
    expect(r.headers['x-tollgater']).toBe('kept');
    expect(r.headers['x-requested-with']).toBe('kept');
    expect(r.headers['content-type']).toBe('text/plain');

    // The filter itself does not rely on the client library lower-casing names.
    expect(
      filterResponseHeaders({
        ...Object.fromEntries(forged),
        'Content-Type': 'text/plain',
        'X-Tollgate': 'kept (no dash after the prefix)',
      }),
    ).toEqual({ 'content-type': 'text/plain', 'x-tollgate': 'kept (no dash after the prefix)' });
  });

  it('passes 4xx and 5xx statuses through as successful exchanges', async () => {
    upstream().handle((_req, res) => {
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
    upstream().handle((_req, res) => {
      res.writeHead(200).end(payload);
    });
    const small = await ok(forwarder.forward(request()));
    expect(await readCapped(small.body, 100)).toBe('too_large');
    expect(small.body.destroyed).toBe(true);
    const fits = await ok(forwarder.forward(request()));
    expect(await readCapped(fits.body, 500)).toEqual(payload);
  });

  it('fails up front when the declared length exceeds maxResponseBytes', async () => {
    upstream().handle((_req, res) => {
      res.writeHead(200, { 'content-length': String(100 * 1024) }).end(Buffer.alloc(100 * 1024));
    });
    expect(await forwarder.forward(request())).toEqual({
      ok: false,
      error: 'upstream_error',
      detail: 'TOLLGATE_RESPONSE_TOO_LARGE',
    });
  });

  it('does not treat the declared length of a HEAD answer as a body', async () => {
    upstream().handle((_req, res) => {
      res.writeHead(200, { 'content-length': String(100 * 1024) }).end();
    });
    const r = await ok(forwarder.forward(request({ method: 'HEAD' })));
    expect(r.headers['content-length']).toBe(String(100 * 1024));
    expect(await readCapped(r.body, 10)).toEqual(Buffer.alloc(0));
  });

  it('cuts a chunked body that grows past maxResponseBytes', async () => {
    upstream().handle((_req, res) => {
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
    upstream().handle(() => {});
    expect(await forwarder.forward(request({ timeoutMs: 150 }))).toEqual({
      ok: false,
      error: 'upstream_timeout',
      detail: UPSTREAM_TIMEOUT_CODE,
    });
  });

  it('times out on a body that stalls after the headers, as an error on the stream', async () => {
    upstream().handle((_req, res) => {
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
    upstream().handle((req) => {
      req.socket.destroy();
    });
    const r = await forwarder.forward(request({ method: 'POST', body: Buffer.from('{}') }));
    expect(r).toMatchObject({ ok: false, error: 'upstream_error' });
  });

  it('reports a TCP reset as upstream_error', async () => {
    upstream().handle((req) => {
      req.socket.resetAndDestroy();
    });
    const r = await forwarder.forward(request());
    expect(r).toMatchObject({ ok: false, error: 'upstream_error' });
  });

  it('reports a reset in the middle of the body as an upstream_error on the stream', async () => {
    upstream().handle((req, res) => {
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
      expect(upstream().seen).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });
});

describe('probe', () => {
  it('is healthy on any answer below 500 and unhealthy on 5xx, refusal or a blocked origin', async () => {
    upstream().handle((req, res) => {
      res.writeHead(req.url === '/broken' ? 502 : 404).end();
    });
    expect(await forwarder.probe(`${upstream().base}/v2`)).toBe(true);
    expect(upstream().seen.at(-1)).toMatchObject({ method: 'HEAD', url: '/v2' });
    expect(await forwarder.probe(`${upstream().base}/broken`)).toBe(false);
    expect(await forwarder.probe(`http://127.0.0.1:${await closedPort()}`)).toBe(false);
    expect(await forwarder.probe('not a url')).toBe(false);
    const strict = createForwarder({ allowPrivate: false, maxResponseBytes: 1024 });
    try {
      const before = upstream().connections;
      expect(await strict.probe(`https://127.0.0.1:${upstream().port}`)).toBe(false);
      expect(upstream().connections).toBe(before);
    } finally {
      await strict.close();
    }
  });

  it('is unhealthy when the origin does not answer in time', async () => {
    upstream().handle(() => {});
    expect(await forwarder.probe(upstream().base, 100)).toBe(false);
  });
});

describe('client abort', () => {
  it('gives up before the headers when the client goes away', async () => {
    upstream().handle(() => {});
    const ac = new AbortController();
    const pending = forwarder.forward(request({ signal: ac.signal }));
    await waitFor(() => upstream().seen.length === 1);
    ac.abort();
    expect(await pending).toEqual({ ok: false, error: 'upstream_error', detail: CLIENT_ABORTED_CODE });
  });

  it('destroys a streaming body and the upstream exchange when the client goes away', async () => {
    let upstreamClosed: Promise<unknown> = Promise.resolve();
    upstream().handle((_req, res) => {
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
    expect(upstream().seen).toHaveLength(0);
  });
});

describe('a body nobody reads yet', () => {
  it('keeps an upstream failure on the body (errored) instead of throwing it', async () => {
    // The paid path holds the body unread while a v2 payment is sent: an upstream that fails
    // meanwhile must not become an uncaught exception (undici's own body swallowed it too).
    upstream().handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('part of it');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const r = await ok(forwarder.forward(request()));
    r.body.pause();
    await waitFor(() => r.body.errored !== null);
    expect(classifyUpstreamError(r.body.errored)).toMatchObject({ error: 'upstream_error' });
  });
});

describe('the client’s signal', () => {
  it('holds no listener of a finished exchange, answered or failed', async () => {
    const shared = new AbortController().signal;
    for (let i = 0; i < 3; i++) {
      const r = await ok(forwarder.forward(request({ signal: shared })));
      await readCapped(r.body, 1024);
    }
    expect(
      await forwarder.forward(request({ signal: shared, baseUrl: `http://127.0.0.1:${await closedPort()}` })),
    ).toMatchObject({ ok: false });
    expect(getEventListeners(shared, 'abort')).toHaveLength(0);
  });
});

describe('memory', () => {
  it('keeps nothing of its caller: the caller’s state is not promoted to the old generation', async () => {
    // Through undici's `request` API the caller's whole state outlived two scavenges and was
    // promoted (about 5 KB of old space per exchange here; the paid path, in the bench).
    const perExchange = await withForgetfulOrigin('application/json', '{}', (baseUrl) =>
      oldBytesPerAsyncCall(async () => {
        // What a paid request holds while its answer comes.
        const state = Array.from({ length: 40 }, (_, k) => ({ k, text: `${'q'.repeat(60)}${k}` }));
        const r = await forwarder.forward(request({ baseUrl }));
        if (!r.ok) throw new Error(`the exchange failed: ${r.detail}`);
        const bytes = await readCapped(r.body, 1024);
        if (bytes === 'too_large' || bytes.length + state.length !== 42) throw new Error('wrong answer');
      }, 400),
    );
    expect(perExchange).toBeLessThan(1000);
  });
});
