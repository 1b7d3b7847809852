/**
 * Forwarder.relay: the same exchange as forward() without streams (the fast path's
 * forward, http/fast-unpaid.ts). What an origin gets and what comes back are forward()'s
 * (the header rules have their own suites); these check what is relay's own: the sink's
 * calls (head, data, then exactly one end or fail), the caps, the deadline, a client
 * that leaves, and backpressure.
 */
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  CLIENT_ABORTED_CODE,
  type ForwardRequest,
  RESPONSE_TOO_LARGE_CODE,
  type Relay,
  UPSTREAM_TIMEOUT_CODE,
} from '../../src/proxy/index.ts';
import { oldBytesPerAsyncCall } from '../support/old-generation.ts';
import { useForwarding, waitFor } from './forward-harness.ts';
import { closedPort, withForgetfulOrigin } from './upstream.ts';

const { up: upstream, forwarder, request } = useForwarding();

interface Seen {
  status: number | null;
  headers: Record<string, string | string[]> | null;
  body: Buffer[];
  ended: number;
  failed: { error: string; detail: string }[];
  /** Every call, in order: head, data, end, fail. */
  calls: string[];
}

/** Relays `req`; the sink asks for a pause at chunk `pauseAfter`. */
function relay(req: ForwardRequest, pauseAfter = Number.POSITIVE_INFINITY) {
  const seen: Seen = { status: null, headers: null, body: [], ended: 0, failed: [], calls: [] };
  let settle!: () => void;
  const settled = new Promise<void>((r) => {
    settle = r;
  });
  const handle: Relay = forwarder.relay(req, {
    head(status, headers) {
      seen.calls.push('head');
      seen.status = status;
      seen.headers = headers;
    },
    data(chunk) {
      seen.calls.push('data');
      seen.body.push(Buffer.from(chunk));
      return seen.body.length !== pauseAfter;
    },
    end() {
      seen.calls.push('end');
      seen.ended++;
      settle();
    },
    fail(failure) {
      seen.calls.push('fail');
      seen.failed.push(failure);
      settle();
    },
  });
  return { seen, settled, handle };
}

/** The calls without repeated data. */
function shape(calls: string[]): string[] {
  return calls.filter((c, i) => c !== 'data' || calls[i - 1] !== 'data');
}

describe('relay', () => {
  it('passes the status, the filtered headers and the body, then ends once', async () => {
    upstream().handle((_req, res) => {
      res.writeHead(201, { 'content-type': 'text/plain', 'set-cookie': 'a=b', 'x-kept': '1' }).end('hello');
    });
    const { seen, settled } = relay(request());
    await settled;
    expect(seen.status).toBe(201);
    expect(seen.headers).toMatchObject({ 'content-type': 'text/plain', 'x-kept': '1' });
    expect(seen.headers?.['set-cookie']).toBeUndefined();
    expect(Buffer.concat(seen.body).toString()).toBe('hello');
    expect(shape(seen.calls)).toEqual(['head', 'data', 'end']);
    expect(upstream().seen.at(-1)?.headers['x-request-id']).toBe('req-123');
  });

  it('fails before the head when the declared length exceeds maxResponseBytes', async () => {
    upstream().handle((_req, res) => {
      res.writeHead(200, { 'content-length': String(100 * 1024) }).end(Buffer.alloc(100 * 1024));
    });
    const { seen, settled } = relay(request());
    await settled;
    expect(seen.calls).toEqual(['fail']);
    expect(seen.failed).toEqual([{ error: 'upstream_error', detail: RESPONSE_TOO_LARGE_CODE }]);
  });

  it('does not take the declared length of a HEAD answer for a body', async () => {
    upstream().handle((_req, res) => {
      res.writeHead(200, { 'content-length': String(100 * 1024) }).end();
    });
    const { seen, settled } = relay(request({ method: 'HEAD' }));
    await settled;
    expect(seen.calls).toEqual(['head', 'end']);
    expect(seen.headers?.['content-length']).toBe(String(100 * 1024));
  });

  it('fails mid-body when a body of unknown length grows past maxResponseBytes', async () => {
    upstream().handle((_req, res) => {
      res.writeHead(200);
      for (let i = 0; i < 20; i++) res.write(Buffer.alloc(8 * 1024, 0x62));
      res.end();
    });
    const { seen, settled } = relay(request());
    await settled;
    expect(shape(seen.calls)).toEqual(['head', 'data', 'fail']);
    expect(seen.failed[0]?.error).toBe('upstream_error');
    expect(Buffer.concat(seen.body).length).toBeLessThanOrEqual(64 * 1024);
  });

  it('times out before the head when the origin never answers', async () => {
    upstream().handle(() => {});
    const { seen, settled } = relay(request({ timeoutMs: 150 }));
    await settled;
    expect(seen.calls).toEqual(['fail']);
    expect(seen.failed).toEqual([{ error: 'upstream_timeout', detail: UPSTREAM_TIMEOUT_CODE }]);
  });

  it('times out mid-body when the body stalls after the head', async () => {
    upstream().handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    });
    const { seen, settled } = relay(request({ timeoutMs: 300 }));
    await settled;
    expect(shape(seen.calls)).toEqual(['head', 'data', 'fail']);
    expect(seen.failed).toEqual([{ error: 'upstream_timeout', detail: UPSTREAM_TIMEOUT_CODE }]);
  });

  it('reports a refused connection and a bad base URL through fail, never a throw', async () => {
    const port = await closedPort();
    const refused = relay(request({ baseUrl: `http://127.0.0.1:${port}` }));
    await refused.settled;
    expect(refused.seen.failed).toEqual([{ error: 'upstream_error', detail: 'ECONNREFUSED' }]);
    const bad = relay(request({ baseUrl: 'not a url' }));
    await bad.settled;
    expect(bad.seen.failed).toEqual([{ error: 'upstream_error', detail: 'invalid_base_url' }]);
  });

  it('ends the exchange when the client leaves before the head', async () => {
    upstream().handle(() => {});
    const { seen, settled, handle } = relay(request({ timeoutMs: 10_000 }));
    await waitFor(() => upstream().seen.length === 1);
    handle.abort();
    await settled;
    expect(seen.failed).toEqual([{ error: 'upstream_error', detail: CLIENT_ABORTED_CODE }]);
  });

  it('ends the exchange (and the origin sees it closed) when the client leaves mid-body', async () => {
    let upstreamClosed: Promise<unknown> = Promise.resolve();
    upstream().handle((_req, res) => {
      upstreamClosed = once(res, 'close');
      res.writeHead(200);
      res.write('first chunk');
    });
    const { seen, settled, handle } = relay(request({ timeoutMs: 10_000 }));
    await waitFor(() => seen.body.length === 1);
    handle.abort();
    await settled;
    expect(shape(seen.calls)).toEqual(['head', 'data', 'fail']);
    expect(seen.failed).toEqual([{ error: 'upstream_error', detail: CLIENT_ABORTED_CODE }]);
    await upstreamClosed;
    // After the end, leaving again changes nothing.
    handle.abort();
    expect(seen.failed).toHaveLength(1);
  });

  it('stops taking data when the sink asks for a pause, and goes on after resume', async () => {
    const parts = 8;
    upstream().handle((_req, res) => {
      res.writeHead(200);
      let n = 0;
      const next = () => {
        n++;
        if (n === parts) res.end(Buffer.alloc(1024, n));
        else {
          res.write(Buffer.alloc(1024, n));
          setTimeout(next, 5);
        }
      };
      next();
    });
    const { seen, settled, handle } = relay(request(), 1);
    await waitFor(() => seen.body.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    // Paused after the first chunk: nothing more arrived although the origin sent it all.
    expect(seen.body).toHaveLength(1);
    expect(seen.ended).toBe(0);
    handle.resume();
    await settled;
    expect(Buffer.concat(seen.body).length).toBe(parts * 1024);
    expect(seen.ended).toBe(1);
  });

  it('leaves almost nothing in the old generation per exchange (no timer of undici’s own per request)', async () => {
    // undici's headers and body timers are objects in a list it sweeps every half second:
    // armed per request, they outlive two scavenges and are promoted, to die in the old
    // generation (decimal.ts tells what that garbage costs). Every exchange has its deadline.
    const perExchange = await withForgetfulOrigin('text/plain', 'ok', (baseUrl) =>
      oldBytesPerAsyncCall(async () => {
        const { seen, settled } = relay(request({ baseUrl }));
        await settled;
        if (seen.ended !== 1) throw new Error(`the exchange failed: ${JSON.stringify(seen.failed)}`);
      }, 3000),
    );
    expect(perExchange).toBeLessThan(30);
  });
});
