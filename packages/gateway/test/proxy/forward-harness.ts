/**
 * Shared setup for the forwarder suites: one real loopback origin and one forwarder
 * (private origins allowed) per test file, reset between tests.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import {
  createForwarder,
  type ForwardRequest,
  type ForwardResult,
  readCapped,
} from '../../src/proxy/index.ts';
import { startUpstream, type Upstream } from './upstream.ts';

export function useForwarding() {
  let upstream: Upstream | undefined;
  const forwarder = createForwarder({
    allowPrivate: true,
    maxResponseBytes: 64 * 1024,
    userAgent: 'tollgate-test',
  });

  beforeAll(async () => {
    upstream = await startUpstream();
  });
  afterAll(async () => {
    await forwarder.close();
    await upstream?.close();
  });
  afterEach(() => {
    up().seen.length = 0;
    up().handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });

  const up = (): Upstream => {
    if (!upstream) throw new Error('upstream not started');
    return upstream;
  };

  function request(over: Partial<ForwardRequest> = {}): ForwardRequest {
    return {
      baseUrl: up().base,
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

  /** Forward, read the whole body, and return what the upstream saw. */
  async function roundTrip(over: Partial<ForwardRequest> = {}) {
    const r = await ok(forwarder.forward(request(over)));
    const body = await readCapped(r.body, 1 << 20);
    const seen = up().seen.at(-1);
    if (!seen) throw new Error('upstream saw nothing');
    return { r, body, seen, index: up().seen.length - 1 };
  }

  return { up, forwarder, request, roundTrip };
}

export async function ok(result: Promise<ForwardResult>) {
  const r = await result;
  if (!r.ok) throw new Error(`forward failed: ${r.error} ${r.detail}`);
  return r;
}

export async function waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!cond()) throw new Error('condition never became true');
}
