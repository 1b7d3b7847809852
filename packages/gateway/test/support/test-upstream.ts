/**
 * A local upstream for integration tests, with fault modes: answer normally, fail
 * with 500, hang, reset the connection, redirect, or stall mid-body. Records what
 * it received so tests can assert what the gateway forwarded.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type UpstreamMode =
  | 'ok'
  | 'fail500'
  | 'hang'
  | 'reset'
  | 'redirect'
  | 'stall_body'
  | 'big'
  | 'chunked'
  /** Answers `status` with a small JSON body (408, 429, 404, ...). */
  | 'status'
  /** Streams `slowChunks` chunks of unknown total length, one every `delayMs`. */
  | 'slow_chunked';

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface TestUpstream {
  url: string;
  mode: UpstreamMode;
  /** Delay before answering in 'ok' mode (between chunks in 'slow_chunked'), ms. */
  delayMs: number;
  /** Status sent in 'status' mode. */
  status: number;
  /** Chunks sent in 'slow_chunked' mode. */
  slowChunks: number;
  received: Received[];
  /** Requests for paths other than the health probe. */
  calls(path?: string): Received[];
  close(): Promise<void>;
}

export async function startTestUpstream(): Promise<TestUpstream> {
  const sockets = new Set<Socket>();
  const up: TestUpstream = {
    url: '',
    mode: 'ok',
    delayMs: 0,
    status: 200,
    slowChunks: 5,
    received: [],
    calls(path) {
      return up.received.filter((r) => r.url !== '/' && (path === undefined || r.url.split('?')[0] === path));
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      if (rec.url === '/') {
        // Health probe of the origin.
        res.writeHead(up.mode === 'fail500' ? 500 : 200).end();
        return;
      }
      up.received.push(rec);
      switch (up.mode) {
        case 'fail500':
          res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
          return;
        case 'hang':
          return; // never answers
        case 'reset':
          req.socket.destroy();
          return;
        case 'redirect':
          res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end();
          return;
        case 'stall_body':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write('{"partial":');
          return; // never finishes
        case 'chunked': {
          // No content-length: the gateway streams it through and keeps a copy.
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('first part;');
          setTimeout(() => res.end('second part'), 20);
          return;
        }
        case 'status':
          res.writeHead(up.status, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ status: up.status }));
          return;
        case 'slow_chunked': {
          res.writeHead(200, { 'content-type': 'text/plain' });
          let sent = 0;
          const next = () => {
            if (res.destroyed) return;
            sent += 1;
            if (sent >= up.slowChunks) res.end(`chunk${sent};`);
            else {
              res.write(`chunk${sent};`);
              setTimeout(next, up.delayMs);
            }
          };
          next();
          return;
        }
        case 'big': {
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          res.end(Buffer.alloc(256 * 1024, 7));
          return;
        }
        default:
          setTimeout(() => {
            res.writeHead(200, {
              'content-type': 'application/json',
              'x-upstream': 'yes',
              'set-cookie': 'a=b',
            });
            res.end(
              JSON.stringify({
                ok: true,
                method: rec.method,
                url: rec.url,
                body: rec.body.toString('utf8'),
                contentType: rec.headers['content-type'] ?? null,
              }),
            );
          }, up.delayMs);
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  up.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return up;
}
