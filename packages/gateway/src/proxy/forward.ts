/**
 * The hot-path forwarder for `/p/:projectSlug/*` (DESIGN §4.9, SPEC §4.2 rules 5–9).
 *
 * One pooled keep-alive undici Agent per gateway, dialling through the guarded connector.
 * Response bodies are handed back as undici's own stream, never buffered here. One
 * deadline covers connect + headers + body: when it fires the request is aborted and, if
 * the body is already streaming, the body is destroyed with an UpstreamError of kind
 * 'upstream_timeout' (classify stream errors with `classifyUpstreamError`).
 */
import type { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import {
  buildRequestHeaders,
  type ClientHeaders,
  filterResponseHeaders,
  type OriginAuth,
} from './forward-headers.ts';
import { buildTarget, parseBase } from './forward-target.ts';
import { createGuardedConnector } from './guarded-connect.ts';
import type { ResolveHost } from './origin-url.ts';
import {
  CLIENT_ABORTED_CODE,
  classifyUpstreamError,
  RESPONSE_TOO_LARGE_CODE,
  toUpstreamError,
  UPSTREAM_TIMEOUT_CODE,
  UpstreamError,
  type UpstreamFailure,
} from './upstream-error.ts';

export interface ForwardRequest {
  /** Registered origin, may contain a base path, e.g. https://api.example.com/v2 */
  baseUrl: string;
  /** Endpoint path after /p/:slug/, already validated, e.g. "weather/today". */
  path: string;
  /** Raw query string without '?', '' if none, forwarded byte-for-byte. */
  query: string;
  method: string;
  /** The client's request headers (lower-case names). */
  headers: ClientHeaders;
  /** Raw body bytes, forwarded exactly (the bytes that were hashed). */
  body: Buffer | null;
  auth: OriginAuth;
  /** Whole-exchange budget: connect + headers + body. */
  timeoutMs: number;
  clientIp: string;
  forwardedProto: string;
  forwardedHost: string;
  requestId: string;
  /** Aborts the exchange (and destroys a streaming body) when the client goes away. */
  signal?: AbortSignal;
  /**
   * The gateway's `x-tollgate-*` headers (the payment context), made from the exact request
   * target sent to the origin (path and query, after query auth), which their signature covers.
   */
  gatewayHeaders?: (target: string) => readonly string[];
}

export type ForwardResult =
  | { ok: true; status: number; headers: Record<string, string | string[]>; body: Readable }
  | { ok: false; error: UpstreamFailure; detail: string };

export interface ForwarderOptions {
  /** Sandbox/tests only: allow http and loopback/private origins. */
  allowPrivate: boolean;
  /** Keep-alive connections per origin. Default 64. */
  connections?: number;
  /** Hard cap on a response body; larger ones fail (by content-length up front, else mid-stream). */
  maxResponseBytes: number;
  /** Sent only when the client sent no User-Agent. */
  userAgent?: string;
  /** Idle keep-alive socket lifetime. Default 4 s (under typical origin idle timeouts). */
  keepAliveTimeoutMs?: number;
  /** Backstops under the per-request deadline. Default 300 s each. */
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /** Per-address TCP/TLS handshake budget. Default 10 s. */
  connectTimeoutMs?: number;
  /** Host resolution for the guarded connector (tests inject one). */
  resolve?: ResolveHost;
}

export interface Forwarder {
  forward(req: ForwardRequest): Promise<ForwardResult>;
  /**
   * Active health check of an origin through the same guarded pool: a HEAD of the base URL
   * that resolves true on any status below 500 within `timeoutMs` (default 5 s), false on
   * 5xx, timeout, connection failure or a blocked address. Never rejects.
   */
  probe(baseUrl: string, timeoutMs?: number): Promise<boolean>;
  /** Graceful: waits for in-flight exchanges (consume or destroy their bodies). */
  close(): Promise<void>;
}

export function createForwarder(opts: ForwarderOptions): Forwarder {
  const agent = new Agent({
    connections: opts.connections ?? 64,
    pipelining: 1,
    allowH2: false,
    keepAliveTimeout: opts.keepAliveTimeoutMs ?? 4_000,
    headersTimeout: opts.headersTimeoutMs ?? 300_000,
    bodyTimeout: opts.bodyTimeoutMs ?? 300_000,
    maxResponseSize: opts.maxResponseBytes,
    connect: createGuardedConnector({
      allowPrivate: opts.allowPrivate,
      connectTimeoutMs: opts.connectTimeoutMs,
      resolve: opts.resolve,
    }),
  });

  async function forward(req: ForwardRequest): Promise<ForwardResult> {
    const base = parseBase(req.baseUrl, opts.allowPrivate);
    if (typeof base === 'string') return { ok: false, error: 'upstream_error', detail: base };
    if (req.path.includes('?') || req.path.includes('#') || req.query.includes('#')) {
      return { ok: false, error: 'upstream_error', detail: 'invalid_request_target' };
    }
    if (req.signal?.aborted) return { ok: false, error: 'upstream_error', detail: CLIENT_ABORTED_CODE };

    const body = req.body !== null && req.body.length > 0 ? req.body : null;
    const path = buildTarget(base.basePath, req.path, req.query, req.auth.type === 'query' ? req.auth : null);
    const headers = buildRequestHeaders(req.headers, {
      clientIp: req.clientIp,
      forwardedProto: req.forwardedProto,
      forwardedHost: req.forwardedHost,
      requestId: req.requestId,
      userAgent: opts.userAgent,
      hasBody: body !== null,
      auth: req.auth,
      ...(req.gatewayHeaders ? { gatewayHeaders: req.gatewayHeaders(path) } : {}),
    });

    const controller = new AbortController();
    const timer = setTimeout(onDeadline, req.timeoutMs, controller);
    const clientSignal = req.signal;
    const onClientAbort = () =>
      controller.abort(new UpstreamError('upstream_error', CLIENT_ABORTED_CODE, 'client went away'));
    clientSignal?.addEventListener('abort', onClientAbort, { once: true });
    const cleanup = () => {
      clearTimeout(timer);
      clientSignal?.removeEventListener('abort', onClientAbort);
    };

    let res: Dispatcher.ResponseData;
    try {
      res = await agent.request({
        origin: base.origin,
        path,
        method: req.method,
        headers,
        body,
        signal: controller.signal,
      });
    } catch (err) {
      cleanup();
      const { error, detail } = classifyUpstreamError(err);
      return { ok: false, error, detail };
    }

    // A HEAD answer declares the length of a body it never sends.
    const declared = req.method === 'HEAD' ? undefined : res.headers['content-length'];
    if (typeof declared === 'string' && Number(declared) > opts.maxResponseBytes) {
      cleanup();
      res.body.destroy();
      return { ok: false, error: 'upstream_error', detail: RESPONSE_TOO_LARGE_CODE };
    }
    // 'close' follows end, error and destroy alike, so the deadline and listener never outlive the body.
    res.body.once('close', cleanup);
    return {
      ok: true,
      status: res.statusCode,
      headers: filterResponseHeaders(res.headers),
      body: res.body,
    };
  }

  async function probe(baseUrl: string, timeoutMs = 5_000): Promise<boolean> {
    const base = parseBase(baseUrl, opts.allowPrivate);
    if (typeof base === 'string') return false;
    try {
      const res = await agent.request({
        origin: base.origin,
        path: base.basePath === '' ? '/' : base.basePath,
        method: 'HEAD',
        headers: opts.userAgent ? { 'user-agent': opts.userAgent } : {},
        signal: AbortSignal.timeout(timeoutMs),
      });
      // A HEAD answer has no body; dump() drains it without the AbortError destroy() emits.
      await res.body.dump().catch(() => {});
      return res.statusCode < 500;
    } catch {
      return false;
    }
  }

  return {
    forward,
    probe,
    close: () => agent.close(),
  };
}

function onDeadline(controller: AbortController): void {
  controller.abort(
    new UpstreamError('upstream_timeout', UPSTREAM_TIMEOUT_CODE, 'upstream deadline exceeded'),
  );
}

/**
 * Reads a body into one Buffer, or 'too_large' (and destroys the stream) once it exceeds
 * `maxBytes` — also when undici's own response cap cut it. Other failures reject with an
 * UpstreamError.
 */
export function readCapped(body: Readable, maxBytes: number): Promise<Buffer | 'too_large'> {
  // Listeners, not `for await`: an async iterator costs a promise per chunk and more garbage
  // on every forwarded answer. 'close' without 'end' (destroyed mid-body) is a failure too.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let done = false;
    const finish = (err: unknown, value?: Buffer | 'too_large') => {
      if (done) return;
      done = true;
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('close', onClose);
      // Keep an error listener: a stream destroyed later must never raise an unhandled 'error'.
      if (err === null) resolve(value!);
      else if ((err as { code?: unknown } | null)?.code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE')
        resolve('too_large');
      else reject(toUpstreamError(err));
    };
    const onData = (chunk: Buffer | string) => {
      const buf: Buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      total += buf.length;
      if (total > maxBytes) {
        finish(null, 'too_large');
        body.destroy();
        return;
      }
      chunks.push(buf);
    };
    const onEnd = () => finish(null, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    const onClose = () =>
      finish(Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    body.on('error', (err) => finish(err));
    // Already over: its 'error' or 'close' came before these listeners.
    if (body.errored) return finish(body.errored);
    if (body.destroyed) return onClose();
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('close', onClose);
  });
}
