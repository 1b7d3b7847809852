/**
 * Reference point, not a target baseline: the smallest reasonable Node forwarder
 * (node:http server + one keep-alive undici Pool, bodies streamed both ways, hop-by-hop
 * headers dropped). It shows what Node itself costs on this machine, so the gap between
 * it and the gateway is the gateway's own work (routing, checks, logging, metrics).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
  'te',
  'trailer',
]);

const server = createServer(async (req, res) => {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers))
    if (v !== undefined && !HOP.has(k) && k !== 'host') headers[k] = v;
  try {
    const up = await pool.request({
      path: req.url ?? '/',
      method: (req.method ?? 'GET') as 'GET',
      headers,
      body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
    });
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
    res.writeHead(up.statusCode, out);
    up.body.pipe(res);
  } catch {
    res.writeHead(502).end();
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => announce({ port: (server.address() as AddressInfo).port }));
exitOnSignal(async () => {
  await new Promise((r) => server.close(r));
  await pool.close();
});
