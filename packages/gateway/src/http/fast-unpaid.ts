/**
 * The unpaid requests of /p/* answered before Fastify (issue 14: Fastify's routing, hooks
 * and reply cost several times the gateway's own work): the 402, and the forward of an
 * endpoint that costs nothing. server.ts puts this in front of Fastify's request handler;
 * it answers only those two and returns false for every other request, which Fastify
 * then serves exactly as before (nothing of it has been read or written).
 *
 * It answers when all of these hold, else it leaves the request to Fastify:
 * - a marketplace method without a body to parse (GET and HEAD, whose bodies Fastify
 *   never reads, or another one with no Content-Type, no Transfer-Encoding and no
 *   Content-Length but 0), and a path under /p/ without a percent sign (the router
 *   decodes those; let it decide);
 * - no X-PAYMENT and no PAYMENT-SIGNATURE header, not a CORS preflight, the app not
 *   closing (Fastify answers 503 then);
 * - the project's catalogue snapshot is cached (catalog.peek); a missing or too old one
 *   is loaded first (the request waits for it, then is asked about again), and a project
 *   that does not exist, or a load that failed, is the route's;
 * - settlement's answer for an unpaid request (settlement.admitUnpaid, what the route's
 *   admit() asks too, over the same marketplaceAdmitInput) is a challenge, or free;
 * - the caller's rate limit has a token (the shared limiter; a refused caller goes to
 *   Fastify, whose hook answers the 429).
 *
 * What it sends is what the route sends: the same request id rule, nosniff and the CORS
 * policy (cors.ts), the 402 headers and body (respond.ts challengeResponse), the
 * upstream's answer with the headers the route's reply would carry (marketplace.ts's
 * forwardRequest and UpstreamOutcome, the error bodies of errors.ts), and once the answer
 * is sent (on `finish`, or right after `res.end` when nothing was left to send) the same
 * metrics and access line (access-log.ts), under the route pattern Fastify would have
 * matched. test/http/fast-unpaid-parity.test.ts compares the two.
 *
 * Where the route's behaviour is an accident of Fastify, the fast path does better and
 * says so: an answer of unknown length whose upstream fails before its first byte is a
 * clean 502/504 (the route answers 500 with the upstream's headers).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EMPTY_BODY_SHA256 } from '@tollgate/protocol';
import type { Deps } from '../deps.ts';
import { type ErrorCode, errorAnswer } from '../errors.ts';
import { splitMarketplaceTarget } from '../marketplace/paths.ts';
import type { Relay, RelaySink } from '../proxy/forward.ts';
import type { ResponseHeaders } from '../proxy/forward-headers.ts';
import { CLIENT_ABORTED_CODE } from '../proxy/upstream-error.ts';
import type { Api, Endpoint } from '../store/store.ts';
import {
  type AccessLog,
  type AccessRecorder,
  arrivalOf,
  newAccessLog,
  noteArrival,
  noteErrorBody,
} from './access-log.ts';
import { type CorsPolicy, type HeaderEditor, isPreflight, overOriginHeaders, setNosniff } from './cors.ts';
import {
  forwardedProtoOf,
  forwardRequest,
  MARKETPLACE_METHODS,
  MARKETPLACE_ROUTES,
  type MarketplaceTarget,
  marketplaceAdmitInput,
  originAuth,
  UpstreamOutcome,
} from './marketplace.ts';
import { SMALL_BODY_BYTES } from './marketplace-deliver.ts';
import type { RateLimiter } from './rate-limit.ts';
import { challengeResponse } from './respond.ts';

export interface FastUnpaidDeps {
  deps: Deps;
  cors: CorsPolicy;
  limiter: RateLimiter | null;
  record: AccessRecorder;
  /** The request id rule Fastify's genReqId applies (server.ts). */
  requestId(req: IncomingMessage): string;
  /** Whether the app is closing (Fastify answers 503 then). */
  closing(): boolean;
}

/**
 * What handle() did: answered (true), declined having touched nothing (false), or a promise:
 * the project's catalogue snapshot is being loaded, and once it settles the caller asks again
 * with `again` set (the second time handle() answers or declines, never waits).
 */
export type FastOutcome = boolean | Promise<unknown>;

export interface FastUnpaid {
  handle(req: IncomingMessage, res: ServerResponse, again?: boolean): FastOutcome;
  /** How many requests it answered (tests check that it is used). */
  readonly answered: number;
}

const METHODS: ReadonlySet<string> = new Set(MARKETPLACE_METHODS);
const [ROUTE_SLUG_ONLY, ROUTE_WITH_PATH] = MARKETPLACE_ROUTES;
/** The route pattern Fastify would have matched for `url` under /p/<slug>. */
function patternOf(url: string, slug: string): string {
  return url.charCodeAt(3 + slug.length) === 47 ? ROUTE_WITH_PATH : ROUTE_SLUG_ONLY;
}

/** A request this path answers, and what its access line needs. */
interface Answering {
  req: IncomingMessage;
  res: ServerResponse;
  reqId: string;
  method: string;
  url: string;
  pattern: string;
  started: number;
  log: AccessLog;
  /** Its access line and metrics are written (once). */
  recorded: boolean;
}

/**
 * The upstream's headers over ours, as the route's reply.headers(flattenHeaders(…)) sets them.
 * undici gives the names lower-cased already: they are set as they come.
 */
function setAll(target: Headers, upstream: ResponseHeaders): void {
  for (const name in upstream) {
    const v = upstream[name]!;
    target.values[name] = Array.isArray(v) ? v.join(', ') : v;
  }
}

/**
 * A header list that cors.ts can write into, in the order set, with a Fastify reply's
 * rules: names lower-cased, a header set again keeps its place, a removed one loses it.
 */
class Headers implements HeaderEditor {
  values: Record<string, string>;
  constructor(values: Record<string, string> = {}) {
    this.values = values;
  }
  getHeader(name: string): string | undefined {
    return this.values[name];
  }
  header(name: string, value: string): void {
    this.values[name.toLowerCase()] = value;
  }
  hasHeader(name: string): boolean {
    return this.values[name.toLowerCase()] !== undefined;
  }
  removeHeader(name: string): void {
    delete this.values[name.toLowerCase()];
  }
}

/** Whether Fastify would hand the route no body (handle-request.js): then the fast path may answer. */
function noBody(req: IncomingMessage): boolean {
  const method = req.method as string;
  if (method === 'GET' || method === 'HEAD') return true;
  const h = req.headers;
  return (
    h['content-type'] === undefined &&
    h['transfer-encoding'] === undefined &&
    (h['content-length'] === undefined || h['content-length'] === '0')
  );
}

export function createFastUnpaid(f: FastUnpaidDeps): FastUnpaid {
  const { deps, cors, limiter, record } = f;
  const forwardedProto = forwardedProtoOf(deps);
  let answered = 0;

  /** The headers every answer starts with, in a Fastify reply's order: the request-id hook, cors.ts's onRequest. */
  function headersFor(reqId: string, origin: string | undefined): Headers {
    const headers = new Headers();
    headers.header('x-request-id', reqId);
    setNosniff(headers);
    cors.applyActual(headers, origin);
    return headers;
  }
  /**
   * Those of a request without Origin (most are: only browsers send it), made once: the
   * policy is fixed for the app's life. Copied per answer, its request id set in its place.
   */
  const withoutOrigin = headersFor('', undefined).values;
  function ownHeaders(reqId: string, origin: string | undefined): Headers {
    if (origin !== undefined) return headersFor(reqId, origin);
    const headers = new Headers({ ...withoutOrigin });
    headers.values['x-request-id'] = reqId;
    return headers;
  }

  function handle(req: IncomingMessage, res: ServerResponse, again = false): FastOutcome {
    const url = req.url as string;
    const method = req.method as string;
    if (!url.startsWith('/p/') || url.includes('%') || !METHODS.has(method)) return false;
    const h = req.headers;
    if (h['x-payment'] !== undefined || h['payment-signature'] !== undefined) return false;
    if (!noBody(req) || isPreflight({ method, headers: h }) || f.closing()) return false;
    const target = splitMarketplaceTarget(url);
    if (!target.ok) return false;
    const entry = deps.catalog.peek(target.slug);
    // No snapshot, or one too old to answer from: wait for its load here (the route would
    // load it too) rather than leave every request that comes meanwhile to the route, whose
    // other objects cost this path its optimized code after each quiet spell. A load that
    // fails is the route's to report (it loads again).
    if (entry === undefined && !again) {
      // Counted now, before anything is looked up: a caller over its limit costs no lookup
      // (the route refuses it), and one within it is not counted again by the route.
      if (limiter !== null) {
        if (limiter.take(req.socket.remoteAddress as string, url) > 0) return false;
        limiter.counted(req);
      }
      noteArrival(req, performance.now());
      return deps.catalog.get(target.slug);
    }
    if (!entry) return false;
    const started = (again ? arrivalOf(req) : undefined) ?? performance.now();
    const log = newAccessLog();
    const { input, endpoint, api } = marketplaceAdmitInput(
      deps,
      method,
      target,
      entry,
      log,
      EMPTY_BODY_SHA256,
    );
    const admission = deps.settlement.admitUnpaid(input);
    if (admission.kind === 'free') {
      if (endpoint === undefined || api === undefined) return false;
      // A request asked again was counted when it began to wait.
      if (limiter !== null && !again && limiter.take(req.socket.remoteAddress as string, url) > 0)
        return false;
      answered++;
      const reqId = f.requestId(req);
      const pattern = patternOf(url, target.slug);
      const answering: Answering = { req, res, reqId, method, url, pattern, started, log, recorded: false };
      try {
        forwardFree(answering, target, endpoint, api, entry.project.slug);
      } catch (err) {
        // Never handed to Fastify now: the upstream may already have the request.
        deps.log.error({ err, reqId, endpoint: endpoint.id }, 'fast forward failed');
        sendError(answering, 'internal_error', 'internal error', {});
        if (!res.writableEnded) res.destroy();
      }
      return true;
    }
    if (admission.kind !== 'challenge') return false;
    const reqId = f.requestId(req);
    const { headers: challenge, body, ascii } = challengeResponse(admission, reqId);
    if (typeof body !== 'string') return false;
    // Last: a token is spent only for a request this path answers (or one that waited).
    if (limiter !== null && !again && limiter.take(req.socket.remoteAddress as string, url) > 0) return false;

    const out = Object.assign(ownHeaders(reqId, h.origin).values, challenge);
    log.code = 'payment_required';
    answered++;
    res.writeHead(402, out);
    // Latin-1 for an ASCII text: the same bytes, written without making the answer flat first.
    res.end(body, ascii ? 'latin1' : 'utf8');
    const pattern = patternOf(url, target.slug);
    recordAnswer({ req, res, reqId, method, url, pattern, started, log, recorded: false });
    return true;
  }

  /**
   * Writes the access line and metrics once the answer is done, as the route's onResponse
   * hook does: on `finish` (or a response error). A client that left before the answer
   * was finished gets no line, as on every route (docs/operations.md).
   */
  function recordWhenDone(a: Answering): void {
    const { res } = a;
    const done = () => {
      res.removeListener('finish', done);
      res.removeListener('error', done);
      recordNow(a);
    };
    res.on('finish', done);
    res.on('error', done);
  }

  function recordNow(a: Answering): void {
    if (a.recorded) return;
    a.recorded = true;
    record(a.reqId, a.method, a.url, a.pattern, a.res.statusCode, performance.now() - a.started, a.log);
  }

  /**
   * After an answer's res.end: recorded now if it went to the kernel whole (nothing left in
   * the response or the socket; `finish` would come a tick later), else on `finish`.
   */
  function recordAnswer(a: Answering): void {
    if (a.res.writableLength === 0 && !a.res.destroyed) recordNow(a);
    else recordWhenDone(a);
  }

  /** An error answer, rendered as the route's sendError renders it (errors.ts errorAnswer). */
  function sendError(a: Answering, code: ErrorCode, message: string, extra: Record<string, unknown>): void {
    const { res } = a;
    if (res.destroyed || res.headersSent) return;
    const answer = errorAnswer(a.url, code, message, a.reqId, extra);
    noteErrorBody(a.log, answer.body);
    const json = JSON.stringify(answer.body);
    const out = Object.assign(ownHeaders(a.reqId, a.req.headers.origin).values, answer.headers);
    out['content-type'] = 'application/json; charset=utf-8';
    out['content-length'] = String(Buffer.byteLength(json));
    res.writeHead(answer.status, out);
    res.end(json);
    recordAnswer(a);
  }

  /**
   * The free endpoint's answer, as the route's forwardAndDeliver and streamAndSettle give
   * it to an unpaid request: a small answer of known length read whole and sent in one
   * write, anything else streamed as it comes; a client that leaves ends the exchange.
   */
  function forwardFree(
    a: Answering,
    target: MarketplaceTarget,
    endpoint: Endpoint,
    api: Api,
    project: string,
  ) {
    const { req, res } = a;
    const f = new FreeForward(
      a,
      new UpstreamOutcome(deps, endpoint.id, project),
      ownHeaders(a.reqId, req.headers.origin),
      endpoint.id,
    );
    f.relay = deps.forwarder.relay(
      forwardRequest(api, originAuth(api, deps), target, {
        method: a.method,
        headers: req.headers,
        body: null,
        timeoutMs: endpoint.timeoutMs,
        clientIp: req.socket.remoteAddress ?? '',
        forwardedProto,
        requestId: a.reqId,
      }),
      f,
    );
    // A client that leaves ends the exchange (an unpaid request owes it nothing).
    res.once('close', () => {
      if (!res.writableFinished) f.relay?.abort();
    });
  }

  /**
   * One free forward: the relay's sink, with its state in fields (one object per request,
   * not a dozen closures). Each sink call is guarded: a throw in it (a bug, or a header Node
   * refuses to send) must not reach undici's parser callbacks, so the answer is given up,
   * logged, and the exchange ended (broken).
   */
  class FreeForward implements RelaySink {
    readonly a: Answering;
    readonly outcome: UpstreamOutcome;
    readonly headers: Headers;
    readonly endpointId: string;
    status = 0;
    /** wait: no answer yet; buffer: reading a small one whole; stream: passing it on; over: answered. */
    mode: 'wait' | 'buffer' | 'stream' | 'over' = 'wait';
    chunks: Buffer[] = [];
    size = 0;
    /** Null while relay() runs: a request that cannot be sent fails before it returns. */
    relay: Relay | null = null;
    private resumer: (() => void) | null = null;

    constructor(a: Answering, outcome: UpstreamOutcome, headers: Headers, endpointId: string) {
      this.a = a;
      this.outcome = outcome;
      this.headers = headers;
      this.endpointId = endpointId;
    }

    head(code: number, upstream: ResponseHeaders): void {
      try {
        this.onHead(code, upstream);
      } catch (err) {
        this.broken(err);
      }
    }

    data(chunk: Buffer): boolean {
      try {
        return this.onData(chunk);
      } catch (err) {
        this.broken(err);
        return true;
      }
    }

    end(): void {
      try {
        this.onEnd();
      } catch (err) {
        this.broken(err);
      }
    }

    fail(failure: Parameters<RelaySink['fail']>[0]): void {
      try {
        this.onFail(failure);
      } catch (err) {
        this.broken(err);
      }
    }

    /** The head of an answer written as it comes: recorded on `finish`. */
    private streamHead(): void {
      const { req, res } = this.a;
      overOriginHeaders(cors, this.headers, true, req.headers.origin); // /p/ is public (cors.ts corsCovers)
      recordWhenDone(this.a);
      res.writeHead(this.status, this.headers.values);
    }

    private onHead(code: number, upstream: ResponseHeaders): void {
      const { res } = this.a;
      this.status = code;
      this.outcome.answered(code);
      setAll(this.headers, upstream);
      const length = this.headers.values['content-length'];
      const declared = length === undefined ? Number.NaN : Number(length);
      // (1xx answers never get here: the relay skips them.)
      if (code === 204) {
        // No body may follow (RFC 9110 §8.6): Fastify drops both and ends; the rest is drained.
        this.headers.removeHeader('content-type');
        this.headers.removeHeader('content-length');
        this.mode = 'over';
        if (!res.destroyed) {
          this.streamHead();
          res.end();
        }
        return;
      }
      this.mode = Number.isFinite(declared) && declared <= SMALL_BODY_BYTES ? 'buffer' : 'stream';
    }

    private onData(chunk: Buffer): boolean {
      const { res } = this.a;
      if (this.mode === 'buffer') {
        this.size += chunk.length;
        // Defensive: undici fails a body longer than its Content-Length before this.
        if (this.size > SMALL_BODY_BYTES) {
          this.mode = 'over';
          this.chunks = [];
          sendError(this.a, 'upstream_error', 'the upstream failed while sending its answer', {
            reason: 'length_mismatch',
          });
          this.relay?.abort();
          return true;
        }
        this.chunks.push(chunk);
        return true;
      }
      if (this.mode !== 'stream' || res.destroyed) return true;
      if (!res.headersSent) this.streamHead();
      if (res.write(chunk)) return true;
      this.resumer ??= () => this.relay?.resume();
      res.once('drain', this.resumer);
      return false;
    }

    private onEnd(): void {
      const { req, res } = this.a;
      if (this.mode === 'buffer') {
        this.mode = 'over';
        if (res.destroyed) return;
        const { chunks, size } = this;
        const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
        this.chunks = [];
        const v = this.headers.values;
        // What Fastify's reply.send(buffer) adds.
        if (v['content-type'] === undefined) v['content-type'] = 'application/octet-stream';
        if (
          v['content-length'] === undefined ||
          (req.method !== 'HEAD' && Number(v['content-length']) !== body.length)
        )
          v['content-length'] = String(body.length);
        overOriginHeaders(cors, this.headers, true, req.headers.origin); // /p/ is public (cors.ts corsCovers)
        res.writeHead(this.status, v);
        res.end(body);
        recordAnswer(this.a);
      } else if (this.mode === 'stream') {
        this.mode = 'over';
        if (res.destroyed) return;
        if (!res.headersSent) this.streamHead();
        res.end();
      }
    }

    private onFail(failure: Parameters<RelaySink['fail']>[0]): void {
      const { a } = this;
      const { res } = a;
      const was = this.mode;
      this.mode = 'over';
      this.chunks = [];
      if (was === 'wait') {
        const gone = failure.detail === CLIENT_ABORTED_CODE || res.destroyed;
        const { code, message } = this.outcome.failed(failure.error, gone);
        if (!gone) this.outcome.healthFailure(null);
        sendError(a, code, message, { retryable: false, reason: failure.error });
      } else if (was === 'buffer' || (was === 'stream' && !res.headersSent)) {
        const code = failure.error === 'upstream_timeout' ? 'upstream_timeout' : 'upstream_error';
        sendError(a, code, 'the upstream failed while sending its answer', { reason: failure.detail });
      } else if (was === 'stream') {
        // Part of the answer is out: all the client can learn is a cut connection.
        if (failure.detail !== CLIENT_ABORTED_CODE)
          deps.log.warn(
            { reqId: a.reqId, endpoint: this.endpointId, reason: failure.detail },
            'the upstream failed after its answer began; the connection is cut',
          );
        res.destroy();
      }
    }

    private broken(err: unknown): void {
      const { a } = this;
      const { res } = a;
      this.mode = 'over';
      this.chunks = [];
      deps.log.error({ err, reqId: a.reqId, endpoint: this.endpointId }, 'fast forward failed');
      this.relay?.abort();
      if (!res.headersSent && !res.destroyed) {
        try {
          sendError(a, 'internal_error', 'internal error', {});
          return;
        } catch {
          // Nothing could be sent: the connection is cut below.
        }
      }
      res.destroy();
    }
  }

  return {
    handle,
    get answered() {
      return answered;
    },
  };
}
