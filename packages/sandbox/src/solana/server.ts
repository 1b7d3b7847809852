/**
 * Loopback JSON-RPC over node:http, with the fault switches tests use to make the
 * chain look down, slow or lagging.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RPC, RpcError } from './errors.ts';
import type { Handler, SolanaFault } from './methods.ts';

const MAX_BODY = 2 * 1024 * 1024;
const SLOW_MS = 2_000;

const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;
/** bigint → raw JSON integer, so u64 values survive (clients parse them as bigint). */
const stringify = (value: unknown) =>
  JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? rawJSON(v.toString()) : v));

interface RpcRequest {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

async function answer(methods: Record<string, Handler>, req: RpcRequest): Promise<unknown> {
  const id = req && (typeof req.id === 'string' || typeof req.id === 'number') ? req.id : null;
  const fail = (e: RpcError) => ({
    jsonrpc: '2.0',
    error: { code: e.code, message: e.message, ...(e.data === undefined ? {} : { data: e.data }) },
    id,
  });
  if (!req || typeof req !== 'object' || req.jsonrpc !== '2.0' || typeof req.method !== 'string') {
    return fail(new RpcError(RPC.invalidRequest, 'Invalid request'));
  }
  const handler = Object.hasOwn(methods, req.method) ? methods[req.method] : undefined;
  if (!handler) return fail(new RpcError(RPC.methodNotFound, 'Method not found'));
  const params = req.params === undefined ? [] : req.params;
  if (!Array.isArray(params))
    return fail(new RpcError(RPC.invalidParams, 'Invalid params: expected an array'));
  try {
    return { jsonrpc: '2.0', result: await handler(params), id };
  } catch (e) {
    if (e instanceof RpcError) return fail(e);
    return fail(new RpcError(RPC.internal, `Internal error: ${(e as Error).message}`));
  }
}

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        resolve(null);
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export interface RpcServer {
  url: string;
  close(): Promise<void>;
}

export async function startRpcServer(
  methods: Record<string, Handler>,
  fault: () => SolanaFault,
  opts: { port?: number; host?: string },
): Promise<RpcServer> {
  const timers = new Set<NodeJS.Timeout>();
  const delay = () =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, SLOW_MS);
      timers.add(t);
    });
  const send = (res: ServerResponse, status: number, body: string) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };

  const server = createServer(async (req, res) => {
    try {
      if (req.method === 'GET' && req.url === '/health') return send(res, 200, '"ok"');
      if (req.method !== 'POST') return send(res, 405, stringify({ error: 'method not allowed' }));
      const text = await readBody(req);
      if (text === null) return send(res, 413, stringify({ error: 'request too large' }));
      const f = fault();
      if (f === 'slow') await delay();
      if (f === 'rpc_down') {
        const error = { code: RPC.nodeUnhealthy, message: 'Node is unhealthy' };
        return send(res, 503, stringify({ jsonrpc: '2.0', error, id: null }));
      }
      if (f === 'error_500') return send(res, 500, 'Internal Server Error');
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return send(
          res,
          200,
          stringify({ jsonrpc: '2.0', error: { code: RPC.parse, message: 'Parse error' }, id: null }),
        );
      }
      const out = Array.isArray(parsed)
        ? await Promise.all(parsed.map((r) => answer(methods, r as RpcRequest)))
        : await answer(methods, parsed as RpcRequest);
      send(res, 200, stringify(out));
    } catch (e) {
      send(res, 500, stringify({ error: (e as Error).message }));
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
