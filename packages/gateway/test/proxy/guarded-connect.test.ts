import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BlockedAddressError,
  classifyUpstreamError,
  createForwarder,
  createGuardedConnector,
  type ForwardRequest,
  type ResolveHost,
} from '../../src/proxy/index.ts';
import { startUpstream, type Upstream } from './upstream.ts';

let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
});

/** Scripted DNS that records every question. */
function scriptedDns(answers: (host: string, call: number) => string[]): ResolveHost & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    return answers(host, calls.length);
  };
  return Object.assign(resolve, { calls });
}

function request(baseUrl: string): ForwardRequest {
  return {
    baseUrl,
    path: 'secret',
    query: '',
    method: 'GET',
    headers: {},
    body: null,
    auth: { type: 'bearer', secret: 'must-not-leak' },
    timeoutMs: 3_000,
    clientIp: '203.0.113.7',
    forwardedProto: 'https',
    forwardedHost: 'gateway.example',
    requestId: 'r1',
  };
}

describe('forwarder with private origins disallowed', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['[::1]', 'loopback'],
    ['[::ffff:127.0.0.1]', 'loopback'],
    ['2130706433', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['169.254.169.254', 'link_local'],
    ['10.0.0.1', 'private'],
  ])('never dials the literal origin %s', async (host, category) => {
    const forwarder = createForwarder({ allowPrivate: false, maxResponseBytes: 1024 });
    try {
      const before = up.connections;
      expect(await forwarder.forward(request(`https://${host}:${up.port}`))).toEqual({
        ok: false,
        error: 'blocked_address',
        detail: category,
      });
      expect(up.connections).toBe(before);
    } finally {
      await forwarder.close();
    }
  });

  it.each([
    [['127.0.0.1']],
    [['::1']],
    [['93.184.215.14', '127.0.0.1']],
    [['::ffff:7f00:1']],
    [['not-an-ip']],
  ])('blocks a host name whose answer is %j, before any connection', async (answer) => {
    const resolve = scriptedDns(() => answer);
    const forwarder = createForwarder({ allowPrivate: false, maxResponseBytes: 1024, resolve });
    try {
      const before = up.connections;
      const r = await forwarder.forward(request(`https://sneaky.example:${up.port}/v1`));
      expect(r).toMatchObject({ ok: false, error: 'blocked_address' });
      expect(resolve.calls).toEqual(['sneaky.example']);
      expect(up.connections).toBe(before);
    } finally {
      await forwarder.close();
    }
  });

  it('blocks localhost resolved by the system resolver', async () => {
    const forwarder = createForwarder({ allowPrivate: false, maxResponseBytes: 1024 });
    try {
      const before = up.connections;
      const r = await forwarder.forward(request(`https://localhost:${up.port}`));
      expect(r).toMatchObject({ ok: false, error: 'blocked_address', detail: 'loopback' });
      expect(up.connections).toBe(before);
    } finally {
      await forwarder.close();
    }
  });

  it('reports a name that does not resolve as upstream_error', async () => {
    const resolve: ResolveHost = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    const forwarder = createForwarder({ allowPrivate: false, maxResponseBytes: 1024, resolve });
    try {
      expect(await forwarder.forward(request('https://gone.example'))).toEqual({
        ok: false,
        error: 'upstream_error',
        detail: 'ENOTFOUND',
      });
    } finally {
      await forwarder.close();
    }
  });
});

// Nothing here may reach the internet, so these tests let exactly one loopback address
// play "public" via isAllowed; the connector's own resolution and dialling are unchanged.
describe('guarded connector dialling', () => {
  const onlyLoopback1 = (ip: string) => ip === '127.0.0.1';

  it('dials the address it checked, never resolving the name again (DNS rebinding)', async () => {
    const resolve = scriptedDns((_h, call) => (call === 1 ? ['127.0.0.1'] : ['127.0.0.2']));
    const agent = new Agent({
      connect: createGuardedConnector({ allowPrivate: false, resolve, isAllowed: onlyLoopback1 }),
    });
    try {
      const before = up.connections;
      // origin.test exists in no DNS: the request can only succeed by dialling the checked IP.
      const first = await agent.request({
        origin: `http://origin.test:${up.port}`,
        path: '/one',
        method: 'GET',
        headers: { connection: 'close' },
      });
      expect(first.statusCode).toBe(200);
      await first.body.text();
      expect(up.seen.at(-1)?.headers.host).toBe(`origin.test:${up.port}`);

      // The record now points somewhere forbidden; the next dial must be refused.
      const second = await agent
        .request({ origin: `http://origin.test:${up.port}`, path: '/two', method: 'GET' })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(second).toBeInstanceOf(BlockedAddressError);
      expect(classifyUpstreamError(second).error).toBe('blocked_address');
      expect(resolve.calls).toEqual(['origin.test', 'origin.test']);
      expect(up.connections - before).toBe(1);
      expect(up.seen.map((s) => s.url)).not.toContain('/two');
    } finally {
      await agent.close();
    }
  });

  it('falls back to the next checked address when one refuses the connection', async () => {
    const resolve = scriptedDns(() => ['127.0.0.2', '127.0.0.1']);
    const agent = new Agent({
      connect: createGuardedConnector({
        allowPrivate: false,
        resolve,
        isAllowed: (ip) => ip === '127.0.0.1' || ip === '127.0.0.2',
      }),
    });
    try {
      const res = await agent.request({
        origin: `http://multi.test:${up.port}`,
        path: '/fallback',
        method: 'GET',
      });
      expect(res.statusCode).toBe(200);
      await res.body.text();
      expect(up.seen.at(-1)?.url).toBe('/fallback');
    } finally {
      await agent.close();
    }
  });

  describe('over TLS', () => {
    const fixtures = new URL('./fixtures/', import.meta.url);
    const cert = readFileSync(new URL('origin-test.cert.pem', fixtures));
    const key = readFileSync(new URL('origin-test.key.pem', fixtures));
    let port = 0;
    const servernames: Array<string | false | null> = [];
    const server = createHttpsServer({ cert, key }, (req, res) => {
      servernames.push((req.socket as TLSSocket).servername);
      res.end('tls ok');
    });

    beforeAll(async () => {
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      port = (server.address() as AddressInfo).port;
    });
    afterAll(async () => {
      server.closeAllConnections();
      server.close();
    });

    function tlsAgent(): Agent {
      return new Agent({
        connect: createGuardedConnector({
          allowPrivate: false,
          resolve: async () => ['127.0.0.1'],
          isAllowed: onlyLoopback1,
          tls: { ca: cert },
        }),
      });
    }

    it('verifies the certificate against the host name and sends it as SNI', async () => {
      const agent = tlsAgent();
      try {
        const res = await agent.request({ origin: `https://origin.test:${port}`, path: '/', method: 'GET' });
        expect(res.statusCode).toBe(200);
        expect(await res.body.text()).toBe('tls ok');
        expect(servernames.at(-1)).toBe('origin.test');
      } finally {
        await agent.close();
      }
    });

    it('fails as upstream_error when the certificate does not match the name', async () => {
      const agent = tlsAgent();
      try {
        const err = await agent
          .request({ origin: `https://other.test:${port}`, path: '/', method: 'GET' })
          .then(
            () => null,
            (e: unknown) => e,
          );
        expect((err as { code?: string }).code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
        expect(classifyUpstreamError(err).error).toBe('upstream_error');
      } finally {
        await agent.close();
      }
    });
  });
});
