/**
 * Slow clients cannot hold the gateway's sockets (DESIGN §4.1 server timeouts): a
 * client that sends its headers (or nothing, or its body) too slowly is closed after
 * TOLLGATE_HEADERS_TIMEOUT_MS / TOLLGATE_REQUEST_TIMEOUT_MS, while a slow *answer*
 * (a long streamed response, a slow upstream) is never cut by them: Node's request
 * timeout covers receiving the request, not sending the response.
 * Driven against a real listening gateway with raw sockets.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 900;
/** Node checks its timeouts on an interval; the gateway keeps it a fraction of the timeout. */
const SLACK_MS = 1000;

let h: Harness;
let port: number;

beforeAll(async () => {
  h = await startHarness({
    env: {
      TOLLGATE_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      TOLLGATE_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      PLATFORM_FEE_MIN: '0', // the `free` endpoint then needs no payment
    },
  });
  port = Number(new URL(h.baseUrl).port);
});
afterAll(async () => {
  await h?.close();
});

interface Outcome {
  closedAfterMs: number | null;
  received: string;
}

/** Opens a raw socket, lets `drive` write to it, and reports when (if) the server closes it. */
function rawClient(drive: (s: Socket) => void, giveUpMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let t0 = 0;
    const giveUp = setTimeout(() => {
      socket.removeAllListeners('close');
      socket.destroy();
      resolve({ closedAfterMs: null, received });
    }, giveUpMs);
    socket.on('data', (d) => {
      received += d.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve({ closedAfterMs: Date.now() - t0, received });
    });
    socket.on('connect', () => {
      t0 = Date.now();
      drive(socket);
    });
  });
}

describe('a slow client', () => {
  it('that sends a partial header line and waits is closed after the headers timeout', async () => {
    const r = await rawClient((s) => s.write('GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: a'), 5_000);
    expect(r.closedAfterMs).not.toBeNull();
    expect(r.closedAfterMs!).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    expect(r.closedAfterMs!).toBeLessThan(HEADERS_TIMEOUT_MS + SLACK_MS);
    expect(r.received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('that trickles header lines (each in time) is still closed after the headers timeout', async () => {
    const r = await rawClient((s) => {
      s.write('GET /health HTTP/1.1\r\nHost: x\r\n');
      const t = setInterval(() => (s.writable ? s.write('X-More: y\r\n') : clearInterval(t)), 100);
      s.once('close', () => clearInterval(t));
    }, 5_000);
    expect(r.closedAfterMs).not.toBeNull();
    expect(r.closedAfterMs!).toBeLessThan(HEADERS_TIMEOUT_MS + SLACK_MS);
  });

  it('that connects and sends nothing is closed after the headers timeout', async () => {
    const r = await rawClient(() => {}, 5_000);
    expect(r.closedAfterMs).not.toBeNull();
    expect(r.closedAfterMs!).toBeLessThan(HEADERS_TIMEOUT_MS + SLACK_MS);
  });

  it('that sends its body too slowly is closed after the request timeout', async () => {
    const url = `/p/${h.project.slug}/orders/new`;
    const r = await rawClient(
      (s) =>
        s.write(
          `POST ${url} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`,
        ),
      5_000,
    );
    expect(r.closedAfterMs).not.toBeNull();
    expect(r.closedAfterMs!).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(r.closedAfterMs!).toBeLessThan(REQUEST_TIMEOUT_MS + SLACK_MS);
  });
});

describe('a slow answer', () => {
  it('streams to the end even when it lasts longer than both timeouts', async () => {
    h.upstream.mode = 'slow_chunked';
    h.upstream.delayMs = 250;
    h.upstream.slowChunks = 7; // ~1.5 s, under the endpoint's 2 s timeout
    try {
      const started = Date.now();
      const res = await fetch(`${h.baseUrl}/p/${h.project.slug}/free`);
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(Date.now() - started).toBeGreaterThan(REQUEST_TIMEOUT_MS + 300);
      expect(body).toBe('chunk1;chunk2;chunk3;chunk4;chunk5;chunk6;chunk7;');
    } finally {
      h.upstream.mode = 'ok';
      h.upstream.delayMs = 0;
    }
  });

  it('from a slow upstream is still delivered after the request timeout has passed', async () => {
    h.upstream.delayMs = REQUEST_TIMEOUT_MS + 500;
    try {
      const res = await fetch(`${h.baseUrl}/p/${h.project.slug}/free`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true });
    } finally {
      h.upstream.delayMs = 0;
    }
  });

  it('on a raw keep-alive socket is not cut either', async () => {
    h.upstream.delayMs = REQUEST_TIMEOUT_MS + 300;
    try {
      const r = await rawClient(
        (s) => s.write(`GET /p/${h.project.slug}/free HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
        5_000,
      );
      expect(r.received).toMatch(/^HTTP\/1\.1 200 /);
      expect(r.received).toContain('"ok":true');
    } finally {
      h.upstream.delayMs = 0;
    }
  });
});
