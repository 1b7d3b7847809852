/**
 * A local upstream for integration tests, with fault modes: answer normally, fail
 * with 500, hang, reset the connection, redirect, or stall mid-body; or ('scripted')
 * follow the fault script each request carries in its query. Records what it received
 * so tests can assert what the gateway forwarded.
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
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
  | 'slow_chunked'
  /**
   * Each request names its own faults in its query, `fault=reset,hang,ok`: the n-th call
   * of the same URL gets the n-th fault, the last one repeats (see ScriptedFault). Every
   * call is recorded in `answers`, with the gateway that made it (`x-forwarded-host`).
   */
  | 'scripted';

/**
 * A fault of 'scripted' mode. Deliverable: `ok`, `delay<ms>` (ok after a delay),
 * `status<code>` (that status, small body), `chunked` (two parts, no length),
 * `slow<n>x<ms>` (n parts, one every ms, no length). Failing: `hang` (never answers),
 * `reset` (destroys the connection), `stall` (200, part of the body, then nothing),
 * `cut` (200 with a declared length, half the body, then the connection is destroyed).
 * A status fault fails or delivers as the gateway classifies its status.
 */
export type ScriptedFault = string;

/** One call in 'scripted' mode. */
export interface ScriptedAnswer {
  /** The request target as received (path and query). */
  url: string;
  /** Which call of this URL it was, from 1. */
  call: number;
  fault: ScriptedFault;
  /** Status sent; 0 when none was (hang, reset). */
  status: number;
  /** The `x-forwarded-host` the gateway sent: which gateway made the call. */
  via: string;
  startedAt: number;
  /** When the answer was fully written or its connection closed, whichever came first; 0 while open. */
  endedAt: number;
  /** True when the whole answer was written (its last byte handed to the connection). */
  complete: boolean;
}

/** The body a 'scripted' call answers in full (what the caller of a deliverable fault gets). */
export function scriptedBody(url: string, call: number, fault: ScriptedFault): string {
  const head = `scripted call=${call} fault=${fault} url=${url}\n`;
  return head + scriptedParts(fault).join('');
}

function scriptedParts(fault: ScriptedFault): string[] {
  if (fault === 'chunked') return ['part1;', 'part2;'];
  const slow = /^slow(\d+)x(\d+)$/.exec(fault);
  if (slow) return Array.from({ length: Number(slow[1]) }, (_, i) => `part${i + 1};`);
  return ['done'];
}

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
  /** Every call answered in 'scripted' mode, in arrival order. */
  answers: ScriptedAnswer[];
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
    answers: [],
    calls(path) {
      return up.received.filter((r) => r.url !== '/' && (path === undefined || r.url.split('?')[0] === path));
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const scriptedCalls = new Map<string, number>();
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
        case 'scripted':
          answerScripted(up, scriptedCalls, rec.url, req, res);
          return;
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

function answerScripted(
  up: TestUpstream,
  calls: Map<string, number>,
  url: string,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const call = (calls.get(url) ?? 0) + 1;
  calls.set(url, call);
  const faults = (new URL(url, 'http://upstream').searchParams.get('fault') ?? 'ok').split(',');
  const fault = faults[Math.min(call, faults.length) - 1] ?? 'ok';
  const answer: ScriptedAnswer = {
    url,
    call,
    fault,
    status: 0,
    via: String(req.headers['x-forwarded-host'] ?? ''),
    startedAt: Date.now(),
    endedAt: 0,
    complete: false,
  };
  up.answers.push(answer);
  res.once('finish', () => {
    answer.complete = true;
    answer.endedAt ||= Date.now();
  });
  res.once('close', () => {
    answer.endedAt ||= Date.now();
  });
  const head = (status: number, headers: Record<string, string | number>) => {
    answer.status = status;
    res.writeHead(status, headers);
  };
  const text = { 'content-type': 'text/plain' };
  const body = scriptedBody(url, call, fault);
  const first = body.slice(0, body.indexOf('\n') + 1);
  const status = /^status(\d{3})$/.exec(fault);
  const delay = /^delay(\d+)$/.exec(fault);
  const slow = /^slow(\d+)x(\d+)$/.exec(fault);
  if (fault === 'ok' || status || delay) {
    setTimeout(
      () => {
        if (res.destroyed) return;
        head(status ? Number(status[1]) : 200, { ...text, 'content-length': Buffer.byteLength(body) });
        res.end(body);
      },
      delay ? Number(delay[1]) : 0,
    );
  } else if (fault === 'chunked' || slow) {
    const chunks = scriptedParts(fault);
    const every = slow ? Number(slow[2]) : 20;
    head(200, text);
    res.write(first);
    let sent = 0;
    const next = () => {
      if (res.destroyed) return;
      const chunk = chunks[sent++]!;
      if (sent >= chunks.length) res.end(chunk);
      else {
        res.write(chunk);
        setTimeout(next, every);
      }
    };
    setTimeout(next, every);
  } else if (fault === 'hang') {
    // Never answers.
  } else if (fault === 'reset') {
    req.socket.destroy();
  } else if (fault === 'stall') {
    head(200, text);
    res.write(first);
  } else if (fault === 'cut') {
    head(200, { ...text, 'content-length': Buffer.byteLength(body) });
    res.write(body.slice(0, Math.floor(body.length / 2)));
    setTimeout(() => req.socket.destroy(), 10);
  } else {
    head(400, text);
    res.end(`unknown scripted fault ${fault}`);
  }
}
