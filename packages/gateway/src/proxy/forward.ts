/**
 * The hot-path forwarder for `/p/:projectSlug/*` (DESIGN §4.9, SPEC §4.2 rules 5–9).
 *
 * One pooled keep-alive undici Agent per gateway, dialling through the guarded connector.
 * Response bodies are handed back as a stream as they arrive (forward), or to a sink
 * (relay), both through undici's dispatch API, never buffered here. One
 * deadline covers connect + headers + body: when it fires the request is aborted and, if
 * the body is already streaming, the body is destroyed with an UpstreamError of kind
 * 'upstream_timeout' (classify stream errors with `classifyUpstreamError`).
 */
import { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import {
  buildRequestHeaders,
  type ClientHeaders,
  filterResponseHeaders,
  type OriginAuth,
  type ResponseHeaders,
} from './forward-headers.ts';
import { buildTarget, parseBase } from './forward-target.ts';
import { createGuardedConnector } from './guarded-connect.ts';
import type { ResolveHost } from './origin-url.ts';
import {
  CLIENT_ABORTED_CODE,
  classifyUpstreamError,
  prematureCloseError,
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

/** Where a relayed answer goes (Forwarder.relay). */
export interface RelaySink {
  /** The upstream's status and headers (filtered as for `forward`). */
  head(status: number, headers: ResponseHeaders): void;
  /** A body chunk (its own bytes, safe to keep, as a stream's chunks are); false pauses until resume(). */
  data(chunk: Buffer): boolean;
  end(): void;
  /** The exchange failed, before head or mid-body. */
  fail(failure: { error: UpstreamFailure; detail: string }): void;
}

export interface Relay {
  /** Continues after `sink.data` returned false. */
  resume(): void;
  /** The client went away: ends the exchange (sink.fail gets CLIENT_ABORTED_CODE unless it had ended). */
  abort(): void;
}

const NO_RELAY: Relay = { resume() {}, abort() {} };

interface Prepared {
  ok: true;
  origin: string;
  path: string;
  method: string;
  headers: string[];
  body: Buffer | null;
}

/**
 * What relay's and forward's undici handlers share: one deadline over the whole exchange, a
 * stop that works before undici has started the exchange too, and the declared-length cap.
 */
abstract class DeadlineExchange {
  protected controller: Dispatcher.DispatchController | null = null;
  /** Why the exchange was ended before undici started it (applied in onRequestStart). */
  private reason: Error | null = null;
  /** The exchange ended (its end or its failure reached). */
  protected finished = false;
  protected readonly timer: NodeJS.Timeout;
  private readonly isHead: boolean;
  private readonly maxBytes: number;

  constructor(isHead: boolean, maxBytes: number, timeoutMs: number) {
    this.isHead = isHead;
    this.maxBytes = maxBytes;
    this.timer = setTimeout(exchangeDeadline, timeoutMs, this);
  }

  /** Ends the exchange with `err` (the deadline, the client leaving, a body too large or given up). */
  stop(err: Error): void {
    if (this.finished) return;
    if (this.controller) this.controller.abort(err);
    else this.reason = err;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.reason) controller.abort(this.reason);
  }

  /** The answer declares a body over the cap (a HEAD answer declares the length of a body it never sends). */
  protected declaresTooMuch(headers: Record<string, string | string[] | undefined>): boolean {
    const declared = this.isHead ? undefined : headers['content-length'];
    return typeof declared === 'string' && Number(declared) > this.maxBytes;
  }
}

function exchangeDeadline(exchange: DeadlineExchange): void {
  exchange.stop(deadlineError());
}

/**
 * undici's handler (the dispatch API) for Forwarder.relay: one deadline over the whole
 * exchange, the declared-length cap up front, filtered headers, backpressure through the
 * controller, and exactly one end or fail for the sink.
 */
class RelayHandler extends DeadlineExchange implements Relay {
  private readonly sink: RelaySink;

  constructor(sink: RelaySink, isHead: boolean, maxBytes: number, timeoutMs: number) {
    super(isHead, maxBytes, timeoutMs);
    this.sink = sink;
  }

  resume(): void {
    this.controller?.resume();
  }

  abort(): void {
    this.stop(new UpstreamError('upstream_error', CLIENT_ABORTED_CODE, 'client went away'));
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200 || this.finished) return;
    if (this.declaresTooMuch(headers)) {
      this.done({ error: 'upstream_error', detail: RESPONSE_TOO_LARGE_CODE });
      controller.abort(new UpstreamError('upstream_error', RESPONSE_TOO_LARGE_CODE, 'response too large'));
      return;
    }
    this.sink.head(statusCode, filterResponseHeaders(headers));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.finished) return;
    if (!this.sink.data(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    this.sink.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: unknown): void {
    this.done(classifyUpstreamError(err));
  }

  private done(failure: { error: UpstreamFailure; detail: string }): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    this.sink.fail(failure);
  }
}

/** What an exchange is ended with when its deadline passes (forward and relay alike). */
function deadlineError(): UpstreamError {
  return new UpstreamError('upstream_timeout', UPSTREAM_TIMEOUT_CODE, 'upstream deadline exceeded');
}

/**
 * undici's handler (the dispatch API) for Forwarder.forward: the answer's body is a Node
 * stream of this module's own. Through undici's `request` API (its handler and body stream)
 * the caller's whole state outlived two scavenges and was promoted, about 3 KB of old space
 * per exchange: the paid path filled the old generation (docs/performance.md, thirteenth
 * session; forward-response.test.ts measures it). One deadline over the whole exchange; the
 * client's signal and a destroyed body end it; the declared-length cap is checked up front.
 */
class ForwardHandler extends DeadlineExchange {
  /** Set until the head is known: the exchange's result goes here once. */
  private settle: ((result: ForwardResult) => void) | null;
  private body: Readable | null = null;
  /** The whole answer arrived (its end was pushed). */
  private ended = false;
  private readonly clientSignal: AbortSignal | undefined;
  private readonly onClientAbort = (): void =>
    this.stop(new UpstreamError('upstream_error', CLIENT_ABORTED_CODE, 'client went away'));

  constructor(
    isHead: boolean,
    maxBytes: number,
    timeoutMs: number,
    clientSignal: AbortSignal | undefined,
    settle: (result: ForwardResult) => void,
  ) {
    super(isHead, maxBytes, timeoutMs);
    this.settle = settle;
    this.clientSignal = clientSignal;
    clientSignal?.addEventListener('abort', this.onClientAbort, { once: true });
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    const settle = this.settle;
    if (statusCode < 200 || settle === null) return;
    this.settle = null;
    if (this.declaresTooMuch(headers)) {
      settle({ ok: false, error: 'upstream_error', detail: RESPONSE_TOO_LARGE_CODE });
      controller.abort(new UpstreamError('upstream_error', RESPONSE_TOO_LARGE_CODE, 'response too large'));
      return;
    }
    const body = new Readable({
      highWaterMark: 64 * 1024,
      read: () => this.controller?.resume(),
      destroy: (err, callback) => {
        // The reader gave up on the body (the client left, a cap): the exchange ends with it.
        this.stop(err ?? new UpstreamError('upstream_error', CLIENT_ABORTED_CODE, 'the body was given up'));
        callback(err);
      },
    });
    this.body = body;
    settle({ ok: true, status: statusCode, headers: filterResponseHeaders(headers), body });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const { body } = this;
    if (body !== null && !body.destroyed && !body.push(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    this.finish();
    this.ended = true;
    const { body } = this;
    if (body !== null && !body.destroyed) body.push(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: unknown): void {
    this.finish();
    const settle = this.settle;
    if (settle !== null) {
      this.settle = null;
      const { error, detail } = classifyUpstreamError(err);
      settle({ ok: false, error, detail });
      return;
    }
    const { body } = this;
    // An answer that ended whole stays whole, read or not.
    if (body === null || body.destroyed || this.ended) return;
    // Kept on the body (`errored`) for its reader, never thrown: the paid path holds a body
    // unread while a v2 payment is sent, and a failure then must not end the process.
    body.on('error', ignore);
    body.destroy(err as Error);
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    this.clientSignal?.removeEventListener('abort', this.onClientAbort);
  }
}

function ignore(): void {}

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
  /** Per-address TCP/TLS handshake budget. Default 10 s. */
  connectTimeoutMs?: number;
  /** Host resolution for the guarded connector (tests inject one). */
  resolve?: ResolveHost;
}

export interface Forwarder {
  forward(req: ForwardRequest): Promise<ForwardResult>;
  /**
   * The same exchange as `forward`, without streams: the answer goes to `sink` as it
   * arrives (undici's dispatch API). `req.signal` is not used: the caller ends the
   * exchange with the returned Relay's `abort()`. Exactly one of `sink.end` or
   * `sink.fail` is called, after `sink.head` or without it; a request that cannot be
   * sent at all (a bad base URL) fails before relay() returns.
   */
  relay(req: ForwardRequest, sink: RelaySink): Relay;
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
    // undici's own headers and body timers are off: every exchange here has its deadline
    // (relay and forward: the endpoint's, at most 120 s, to the body's end; probe: 5 s). Armed
    // per request, those timers are objects in a list undici sweeps every half second: they
    // outlived two scavenges, were promoted and died in the old generation, about 90 bytes per
    // forward, which brought mark-compacts (docs/performance.md, twelfth session).
    headersTimeout: 0,
    bodyTimeout: 0,
    maxResponseSize: opts.maxResponseBytes,
    connect: createGuardedConnector({
      allowPrivate: opts.allowPrivate,
      connectTimeoutMs: opts.connectTimeoutMs,
      resolve: opts.resolve,
    }),
  });

  /** The undici request for `req`, or why it cannot be sent. */
  function prepare(req: ForwardRequest): Prepared | { ok: false; error: UpstreamFailure; detail: string } {
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
    return { ok: true, origin: base.origin, path, method: req.method, headers, body };
  }

  function forward(req: ForwardRequest): Promise<ForwardResult> {
    const prepared = prepare(req);
    if (!prepared.ok) return Promise.resolve(prepared);
    const { ok: _ok, ...dispatch } = prepared;
    return new Promise<ForwardResult>((resolve) => {
      const handler = new ForwardHandler(
        req.method === 'HEAD',
        opts.maxResponseBytes,
        req.timeoutMs,
        req.signal,
        resolve,
      );
      try {
        agent.dispatch(dispatch, handler);
      } catch (err) {
        handler.onResponseError(null, err);
      }
    });
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

  function relay(req: ForwardRequest, sink: RelaySink): Relay {
    const prepared = prepare(req);
    if (!prepared.ok) {
      sink.fail({ error: prepared.error, detail: prepared.detail });
      return NO_RELAY;
    }
    const handler = new RelayHandler(sink, req.method === 'HEAD', opts.maxResponseBytes, req.timeoutMs);
    const { ok: _ok, ...dispatch } = prepared;
    try {
      agent.dispatch(dispatch, handler);
    } catch (err) {
      handler.onResponseError(null, err);
    }
    return handler;
  }

  return {
    forward,
    relay,
    probe,
    close: () => agent.close(),
  };
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
    const onClose = () => finish(prematureCloseError());
    body.on('error', (err) => finish(err));
    // Already over: its 'error' or 'close' came before these listeners.
    if (body.errored) return finish(body.errored);
    if (body.destroyed) return onClose();
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('close', onClose);
  });
}
