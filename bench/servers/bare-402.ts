/**
 * Baseline for the 402 path: a bare node:http server answering every request with
 * a fixed 402 carrying the same body bytes and header set as one of the gateway's
 * (captured by the bench into the files named by the environment).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announce, exitOnSignal } from './announce.ts';

const file = process.env['BENCH_402_BODY_FILE'];
if (!file) throw new Error('BENCH_402_BODY_FILE is required');
const body = readFileSync(file);
const headersFile = process.env['BENCH_402_HEADERS_FILE'];
const extra: Record<string, string> = headersFile ? JSON.parse(readFileSync(headersFile, 'utf8')) : {};
const headers = {
  'content-type': 'application/json; charset=utf-8',
  ...extra,
  'content-length': body.length,
};

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(402, headers);
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  announce({ port: (server.address() as AddressInfo).port, bodyBytes: body.length });
});
exitOnSignal(() => new Promise((r) => server.close(r)));
