/**
 * The minimal forwarder (issue 14's yardstick): the leanest reasonable Node proxy. A
 * `node:http` server forwarding through one keep-alive undici `Pool` with `pool.stream`,
 * hop-by-hop headers dropped both ways (the fixed set plus whatever `Connection` names),
 * `X-Forwarded-For` added, bodies streamed both ways. A client that leaves aborts the
 * upstream request; nothing it does can crash the process. The gap between it and the
 * gateway is the gateway's own work (routing, checks, logging, metrics).
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Pool } from 'undici';
import { announce, exitOnSignal } from './announce.ts';

const upstream = process.env['BENCH_UPSTREAM_URL'];
if (!upstream) throw new Error('BENCH_UPSTREAM_URL is required');
const pool = new Pool(upstream, { connections: 64, pipelining: 1, keepAliveTimeout: 60_000 });
const HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
]);

/** Headers without hop-by-hop ones, including those the `Connection` header names. */
function endToEnd(h: IncomingHttpHeaders | Record<string, string | string[] | undefined>) {
  const named = typeof h['connection'] === 'string' ? h['connection'].toLowerCase().split(/\s*,\s*/) : [];
  const out: Record<string, string | string[]> = {};
  for (const k in h) {
    const v = h[k];
    if (v === undefined || HOP.has(k) || (named.length > 0 && named.includes(k))) continue;
    out[k] = v;
  }
  return out;
}

/** The client's response as undici's sink: writes straight through, backpressure included. */
function sink(res: ServerResponse): Writable {
  return new Writable({
    write(chunk, _enc, cb) {
      if (res.write(chunk)) cb();
      else res.once('drain', cb);
    },
    final(cb) {
      res.end(cb);
    },
  });
}

const server = createServer((req, res) => {
  const headers = endToEnd(req.headers);
  delete headers['host'];
  const prior = req.headers['x-forwarded-for'];
  headers['x-forwarded-for'] = prior
    ? `${prior}, ${req.socket.remoteAddress}`
    : (req.socket.remoteAddress ?? '');
  const ac = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) ac.abort();
  });
  pool
    .stream(
      {
        path: req.url ?? '/',
        method: (req.method ?? 'GET') as 'GET',
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
        signal: ac.signal,
      },
      ({ statusCode, headers: upHeaders }) => {
        res.writeHead(statusCode, endToEnd(upHeaders));
        return sink(res);
      },
    )
    .catch(() => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => announce({ port: (server.address() as AddressInfo).port }));
exitOnSignal(async () => {
  await new Promise((r) => server.close(r));
  await pool.close();
});
