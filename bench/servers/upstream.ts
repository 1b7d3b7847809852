/**
 * The reference upstream: a bare node:http JSON server. `/big` answers 256 KB;
 * every other path a small JSON body (~190 B), like the notes' reference upstream.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announce, exitOnSignal } from './announce.ts';

export const BIG_BYTES = 256 * 1024;

const small = Buffer.from(
  JSON.stringify({
    id: 'b7c1d7a2-5f7e-4a8e-9c51-0d8f0c6f2e11',
    city: 'Oslo',
    forecast: [
      { day: 'mon', high: 12, low: 4, sky: 'clear' },
      { day: 'tue', high: 10, low: 3, sky: 'rain' },
    ],
    source: 'bench-upstream',
  }),
);
// Valid JSON of exactly BIG_BYTES: {"data":"xxxx…"}
const big = Buffer.from(`{"data":"${'x'.repeat(BIG_BYTES - 11)}"}`);

const server = createServer((req, res) => {
  const body = req.url === '/big' || req.url?.startsWith('/big?') ? big : small;
  // Drain any request body before answering, so keep-alive connections stay usable.
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env['BENCH_PORT'] ?? 0), '127.0.0.1', () => {
  announce({ port: (server.address() as AddressInfo).port, smallBytes: small.length, bigBytes: big.length });
});
exitOnSignal(() => new Promise((r) => server.close(r)));
