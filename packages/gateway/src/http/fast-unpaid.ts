/**
 * The unpaid 402 of /p/*, answered before Fastify (issue 14: Fastify's routing, hooks
 * and reply cost several times the 402 itself). server.ts puts this in front of
 * Fastify's request handler; it answers only a request that would end in a 402 of the
 * marketplace route and returns false for every other request, which Fastify then
 * serves exactly as before (nothing of it has been read or written).
 *
 * It answers when all of these hold, else it leaves the request to Fastify:
 * - a marketplace method without a body to parse (GET and HEAD, whose bodies Fastify
 *   never reads, or another one with no Content-Type, no Transfer-Encoding and no
 *   Content-Length but 0), and a path under /p/ without a percent sign (the router
 *   decodes those; let it decide);
 * - no X-PAYMENT and no PAYMENT-SIGNATURE header, not a CORS preflight, the app not
 *   closing (Fastify answers 503 then);
 * - the project's catalogue snapshot is cached (catalog.peek): a miss is loaded by
 *   the route, and the next request finds it;
 * - settlement's answer for an unpaid request (settlement.admitUnpaid, what the route's
 *   admit() asks too, over the same marketplaceAdmitInput) is a challenge;
 * - the caller's rate limit has a token (the shared limiter; a refused caller goes to
 *   Fastify, whose hook answers the 429).
 *
 * What it sends is what the route sends: the same request id rule, nosniff and the CORS
 * policy (cors.ts), the 402 headers and body (respond.ts challengeResponse), and on
 * `finish` the same metrics and access line (access-log.ts), under the route pattern
 * Fastify would have matched. test/http/fast-402-parity.test.ts compares the two.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EMPTY_BODY_SHA256 } from '@tollgate/protocol';
import type { Deps } from '../deps.ts';
import { splitMarketplaceTarget } from '../marketplace/paths.ts';
import { type AccessRecorder, newAccessLog } from './access-log.ts';
import { type CorsPolicy, type HeaderTarget, isPreflight, setNosniff } from './cors.ts';
import { MARKETPLACE_METHODS, MARKETPLACE_ROUTES, marketplaceAdmitInput } from './marketplace.ts';
import type { RateLimiter } from './rate-limit.ts';
import { challengeResponse } from './respond.ts';

export interface Fast402Deps {
  deps: Deps;
  cors: CorsPolicy;
  limiter: RateLimiter | null;
  record: AccessRecorder;
  /** The request id rule Fastify's genReqId applies (server.ts). */
  requestId(req: IncomingMessage): string;
  /** Whether the app is closing (Fastify answers 503 then). */
  closing(): boolean;
}

export interface Fast402 {
  /** Answers the request and returns true, or returns false having touched nothing. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** How many 402s it answered (tests check that it is used). */
  readonly answered: number;
}

const METHODS: ReadonlySet<string> = new Set(MARKETPLACE_METHODS);
const [ROUTE_SLUG_ONLY, ROUTE_WITH_PATH] = MARKETPLACE_ROUTES;

/** A header list that cors.ts can write into, in the order set (as a Fastify reply keeps them). */
class Headers implements HeaderTarget {
  readonly values: Record<string, string> = {};
  getHeader(name: string): string | undefined {
    return this.values[name];
  }
  header(name: string, value: string): void {
    this.values[name] = value;
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

export function createFast402(f: Fast402Deps): Fast402 {
  const { deps, cors, limiter, record } = f;
  let answered = 0;

  function handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url as string;
    const method = req.method as string;
    if (!url.startsWith('/p/') || url.includes('%') || !METHODS.has(method)) return false;
    const h = req.headers;
    if (h['x-payment'] !== undefined || h['payment-signature'] !== undefined) return false;
    if (!noBody(req) || isPreflight({ method, headers: h }) || f.closing()) return false;
    const target = splitMarketplaceTarget(url);
    if (!target.ok) return false;
    const entry = deps.catalog.peek(target.slug);
    if (!entry) return false;
    const started = performance.now();
    const log = newAccessLog();
    const { input } = marketplaceAdmitInput(deps, method, target, entry, log, EMPTY_BODY_SHA256);
    const admission = deps.settlement.admitUnpaid(input);
    if (admission.kind !== 'challenge') return false;
    const reqId = f.requestId(req);
    const { headers: challenge, json } = challengeResponse(admission, reqId);
    if (json === null) return false;
    // Last: a token is spent only for a request this path answers.
    if (limiter !== null && limiter.take(req.socket.remoteAddress as string, url) > 0) return false;

    // The order a Fastify reply keeps: the request-id hook, cors.ts's onRequest, the route.
    const headers = new Headers();
    headers.header('x-request-id', reqId);
    setNosniff(headers);
    cors.applyActual(headers, h.origin);
    const out = Object.assign(headers.values, challenge);
    out['content-length'] = String(Buffer.byteLength(json));
    log.code = 'payment_required';
    const pattern = url.charCodeAt(3 + target.slug.length) === 47 ? ROUTE_WITH_PATH : ROUTE_SLUG_ONLY;
    const done = () => {
      res.removeListener('finish', done);
      res.removeListener('error', done);
      record(reqId, method, url, pattern, 402, performance.now() - started, log);
    };
    res.on('finish', done);
    res.on('error', done);
    answered++;
    res.writeHead(402, out);
    res.end(json);
    return true;
  }

  return {
    handle,
    get answered() {
      return answered;
    },
  };
}
