/**
 * A real loopback origin for the forwarding tests: records exactly what arrived (request
 * line, raw header lines, body bytes) and lets each test script the response.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** [name, value] pairs as sent on the wire, names lower-cased. */
  lines: Array<[string, string]>;
  body: Buffer;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen) => void;

export interface Upstream {
  server: Server;
  port: number;
  base: string;
  seen: Seen[];
  connections: number;
  /** Replace the response behaviour (default: 200 "ok"). */
  handle(h: Handler): void;
  /** Header values (all lines) the upstream saw for `name` on request `i`. */
  lineValues(i: number, name: string): string[];
  close(): Promise<void>;
}

export async function startUpstream(): Promise<Upstream> {
  let handler: Handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  };
  const seen: Seen[] = [];
  const state = { connections: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const lines: Array<[string, string]> = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        lines.push([req.rawHeaders[i]!.toLowerCase(), req.rawHeaders[i + 1]!]);
      }
      const entry: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        lines,
        body: Buffer.concat(chunks),
      };
      seen.push(entry);
      handler(req, res, entry);
    });
  });
  server.on('connection', () => {
    state.connections++;
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    base: `http://127.0.0.1:${port}`,
    seen,
    get connections() {
      return state.connections;
    },
    handle(h) {
      handler = h;
    },
    lineValues(i, name) {
      return (seen[i]?.lines ?? []).filter(([n]) => n === name).map(([, v]) => v);
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A port on 127.0.0.1 with nothing listening (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as AddressInfo).port;
  s.close();
  await once(s, 'close');
  return port;
}

/**
 * Runs `run` against an origin that answers every request with `body` and keeps nothing of
 * what it was sent (startUpstream remembers every request): for the old-generation tests,
 * whose count would include the origin's own records.
 */
export async function withForgetfulOrigin<T>(
  contentType: string,
  body: string,
  run: (baseUrl: string) => Promise<T>,
): Promise<T> {
  const length = String(Buffer.byteLength(body));
  const origin = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': contentType, 'content-length': length }).end(body);
  });
  origin.listen(0, '127.0.0.1');
  await once(origin, 'listening');
  const { port } = origin.address() as AddressInfo;
  try {
    return await run(`http://127.0.0.1:${port}`);
  } finally {
    origin.closeAllConnections();
    origin.close();
  }
}
