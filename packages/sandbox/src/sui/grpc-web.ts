/**
 * A gRPC-web endpoint on node:http, as `SuiGrpcClient` speaks it: one length-prefixed
 * protobuf frame in (`application/grpc-web-text` = base64, or `+proto` binary), one data
 * frame plus a trailer frame out. Failures are "trailers-only" answers (grpc-status in the
 * HTTP headers, empty body), which is what real proxies send.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { GrpcStatusCode, GrpcTypes } from '@mysten/sui/grpc';
import type { Handler } from './rpc.ts';
import { RpcFailure } from './rpc.ts';

export type SuiFault = 'none' | 'rpc_down' | 'hold_finality' | 'not_found' | 'slow' | 'error_500';

interface Codec {
  fromBinary(bytes: Uint8Array): object;
  toBinary(message: object): Uint8Array;
}

const MAX_BODY = 8 * 1024 * 1024;

function methodTable(): Map<string, { I: Codec; O: Codec }> {
  const table = new Map<string, { I: Codec; O: Codec }>();
  for (const svc of [
    GrpcTypes.LedgerService,
    GrpcTypes.StateService,
    GrpcTypes.TransactionExecutionService,
  ]) {
    for (const m of svc.methods) {
      if (!m.serverStreaming && !m.clientStreaming)
        table.set(`${svc.typeName}/${m.name}`, { I: m.I, O: m.O });
    }
  }
  return table;
}

function frame(type: number, payload: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + payload.length);
  out[0] = type;
  out.writeUInt32BE(payload.length, 1);
  out.set(payload, 5);
  return out;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new RpcFailure(GrpcStatusCode.RESOURCE_EXHAUSTED, 'request too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export interface GrpcWebOptions {
  handlers: Record<string, Handler>;
  fault: () => SuiFault;
  slowMs: number;
}

export function createGrpcWebServer(opts: GrpcWebOptions): Server {
  const methods = methodTable();
  return createServer((req, res) => {
    void handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const fault = opts.fault();
    if (fault === 'slow') await new Promise((r) => setTimeout(r, opts.slowMs));
    if (fault === 'rpc_down' || fault === 'error_500') {
      req.resume();
      res.writeHead(fault === 'rpc_down' ? 503 : 500, { 'content-type': 'text/plain' });
      res.end(fault === 'rpc_down' ? 'service unavailable' : 'internal server error');
      return;
    }
    const contentType = String(req.headers['content-type'] ?? '');
    const text = contentType.startsWith('application/grpc-web-text');
    const replyType = text ? 'application/grpc-web-text' : 'application/grpc-web+proto';
    const fail = (code: GrpcStatusCode, message: string) => {
      res.writeHead(200, {
        'content-type': replyType,
        'grpc-status': String(code),
        'grpc-message': encodeURIComponent(message),
      });
      res.end();
    };
    if (req.method !== 'POST' || !contentType.startsWith('application/grpc-web')) {
      req.resume();
      res.writeHead(415, { 'content-type': 'text/plain' });
      res.end('expected a grpc-web POST');
      return;
    }
    const key = (req.url ?? '').split('?')[0]!.split('/').slice(-2).join('/');
    const method = methods.get(key);
    const handler = opts.handlers[key];
    try {
      const raw = await readBody(req);
      if (!method || !handler)
        return fail(GrpcStatusCode.UNIMPLEMENTED, `${key} is not implemented by the sandbox`);
      const body = text ? Buffer.from(raw.toString('latin1'), 'base64') : raw;
      if (body.length < 5 || body[0] !== 0 || body.readUInt32BE(1) !== body.length - 5) {
        return fail(GrpcStatusCode.INVALID_ARGUMENT, 'malformed grpc-web frame');
      }
      let request: object;
      try {
        request = method.I.fromBinary(body.subarray(5));
      } catch {
        return fail(GrpcStatusCode.INVALID_ARGUMENT, 'request does not decode');
      }
      const response = await handler(request);
      const payload = Buffer.concat([
        frame(0x00, method.O.toBinary(response)),
        frame(0x80, Buffer.from('grpc-status:0\r\ngrpc-message:\r\n', 'latin1')),
      ]);
      res.writeHead(200, { 'content-type': replyType });
      res.end(text ? payload.toString('base64') : payload);
    } catch (e) {
      if (e instanceof RpcFailure) return fail(e.code, e.message);
      return fail(GrpcStatusCode.INTERNAL, e instanceof Error ? e.message : String(e));
    }
  }
}
