/**
 * Headers every answer carries for browsers: `X-Content-Type-Options: nosniff`, and the
 * CORS policy of the public API (TOLLGATE_CORS_ORIGINS; docs/deploy.md#cors).
 *
 * The rule: a CORS preflight is an OPTIONS request with both `Origin` and
 * `Access-Control-Request-Method` (the Fetch standard's definition). The gateway answers
 * every preflight itself, 204, before routing: it is never forwarded to a provider,
 * never priced and never a 402, and it is not rate-limited. Any other OPTIONS request is
 * an ordinary request: under /p/ it is forwarded and paid for like any other method.
 *
 * CORS covers the public API: /p/, /v1/, /discovery/, /.well-known/ and its description,
 * /openapi.json (editors and client generators fetch it from their own origin). Operator routes
 * (/healthz, /readyz, /metrics, /sandbox/) get no CORS headers, so a web page cannot
 * read them from a browser inside the operator's network. Credentials are never allowed:
 * the API authenticates with bearer tokens and payment headers, not cookies.
 *
 * The policy is the gateway's: the Access-Control-* headers (and nosniff) an origin
 * sends are replaced on the way out, stored replays included.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';

const ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
// `*` covers whatever else a provider's API or an SDK sends (not Authorization, hence listed).
const ALLOW_HEADERS = 'X-PAYMENT, PAYMENT-SIGNATURE, Content-Type, Authorization, X-Request-Id, *';
const EXPOSE_HEADERS =
  'X-PAYMENT-RESPONSE, PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-Request-Id, Retry-After, X-Tollgate-Replay, *';
const MAX_AGE_SEC = '600';

/** Every CORS response header: an origin's are dropped, the gateway sets its own. */
const CORS_RESPONSE_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-expose-headers',
  'access-control-max-age',
  'access-control-allow-private-network',
];

/** The public API, which browsers may call cross-origin. */
export function corsCovers(url: string): boolean {
  return (
    url.startsWith('/p/') ||
    url.startsWith('/v1/') ||
    url.startsWith('/discovery/') ||
    url.startsWith('/.well-known/') ||
    url === '/openapi.json' ||
    url.startsWith('/openapi.json?')
  );
}

/** Every answer: browsers must not guess a type other than the one sent. */
export function setNosniff(target: HeaderTarget): void {
  target.header('x-content-type-options', 'nosniff');
}

/** Where headers are set: a Fastify reply, or the fast path's header list (fast-unpaid.ts). */
export interface HeaderTarget {
  getHeader(name: string): unknown;
  header(name: string, value: string): unknown;
}

/** A HeaderTarget that can also drop headers. */
export interface HeaderEditor extends HeaderTarget {
  hasHeader(name: string): boolean;
  removeHeader(name: string): unknown;
}

/** The gateway's CORS policy (TOLLGATE_CORS_ORIGINS), for the hooks below and the fast path (fast-unpaid.ts). */
export interface CorsPolicy {
  /** No cross-origin access at all (an empty list). */
  off: boolean;
  /** Any origin (`*`). */
  any: boolean;
  /** The Access-Control-Allow-Origin value for this request, or null. */
  allowOrigin(origin: string | undefined): string | null;
  /** The gateway's CORS headers for an actual (not preflight) request on the public API. */
  applyActual(target: HeaderTarget, origin: string | undefined): void;
}

export function corsPolicy(config: Pick<Config, 'corsOrigins'>): CorsPolicy {
  const any = config.corsOrigins === '*';
  const listed = new Set(any ? [] : config.corsOrigins);
  const off = !any && listed.size === 0;
  const allowOrigin = (origin: string | undefined): string | null => {
    if (any) return '*';
    return origin !== undefined && listed.has(origin) ? origin : null;
  };
  return {
    off,
    any,
    allowOrigin,
    applyActual(target, origin) {
      if (off) return;
      if (!any) addVaryOrigin(target);
      const allowed = allowOrigin(origin);
      if (allowed === null) return;
      target.header('access-control-allow-origin', allowed);
      target.header('access-control-expose-headers', EXPOSE_HEADERS);
    },
  };
}

export function corsAndNosniff(app: FastifyInstance, policy: CorsPolicy): void {
  const { any, off, allowOrigin } = policy;

  app.addHook('onRequest', (request, reply, done) => {
    // Set now, not only in onSend: a hijacked reply (streamed inference) writes these itself.
    setNosniff(reply);
    const { headers } = request;
    const covered = corsCovers(request.url);
    if (isPreflight(request)) {
      const allowed = covered && !off ? allowOrigin(headers.origin) : null;
      if (covered && !off && !any) addVaryOrigin(reply);
      if (allowed !== null) {
        reply.header('access-control-allow-origin', allowed);
        reply.header('access-control-allow-methods', ALLOW_METHODS);
        reply.header('access-control-allow-headers', ALLOW_HEADERS);
        reply.header('access-control-max-age', MAX_AGE_SEC);
      }
      reply.code(204).send();
      return;
    }
    if (covered) policy.applyActual(reply, headers.origin);
    done();
  });

  // An answer forwarded from an origin, or replayed from storage, brought its own headers.
  app.addHook('onSend', (request, reply, payload, done) => {
    const covered = !isPreflight(request) && corsCovers(request.url);
    overOriginHeaders(policy, reply, covered, request.headers.origin);
    done(null, payload);
  });
}

/**
 * Last, over whatever an origin's answer (or a stored one) set: nosniff, and on the
 * public API (`covered`, not a preflight) the gateway's CORS headers instead of the
 * origin's. The onSend hook runs it on every reply, the fast path (fast-unpaid.ts) on
 * the answers it forwards.
 */
export function overOriginHeaders(
  policy: CorsPolicy,
  target: HeaderEditor,
  covered: boolean,
  origin: string | undefined,
): void {
  if (target.getHeader('x-content-type-options') !== 'nosniff')
    target.header('x-content-type-options', 'nosniff');
  if (!covered) return;
  const { off, any } = policy;
  // Most answers carry only what onRequest set: then only Vary may need Origin again.
  // Removing headers deletes keys from the reply's header object (slow), so strip and
  // set again only when an origin's or a stored answer's headers differ from ours.
  if (ownCorsOnly(target, off ? null : policy.allowOrigin(origin))) {
    if (!off && !any) addVaryOrigin(target);
  } else {
    for (const name of CORS_RESPONSE_HEADERS) if (target.hasHeader(name)) target.removeHeader(name);
    policy.applyActual(target, origin);
  }
}

/** Whether the reply's CORS headers are exactly those applyCors sets for `allowed`. */
function ownCorsOnly(reply: HeaderTarget, allowed: string | null): boolean {
  for (const name of CORS_RESPONSE_HEADERS) {
    const value = reply.getHeader(name);
    if (name === 'access-control-allow-origin') {
      if (value !== (allowed ?? undefined)) return false;
    } else if (name === 'access-control-expose-headers') {
      if (value !== (allowed === null ? undefined : EXPOSE_HEADERS)) return false;
    } else if (value !== undefined) return false;
  }
  return true;
}

/** OPTIONS with Origin and Access-Control-Request-Method: a browser asking, not a call. */
export function isPreflight(request: Pick<FastifyRequest, 'method' | 'headers'>): boolean {
  return (
    request.method === 'OPTIONS' &&
    request.headers.origin !== undefined &&
    request.headers['access-control-request-method'] !== undefined
  );
}

/** Adds `Origin` to Vary (the answer depends on it when origins are listed), keeping the rest. */
function addVaryOrigin(reply: HeaderTarget): void {
  const vary = reply.getHeader('vary');
  const current = Array.isArray(vary) ? vary.join(', ') : vary === undefined ? '' : String(vary);
  if (current === '') reply.header('vary', 'Origin');
  else if (current.trim() !== '*' && !/(^|,)\s*origin\s*(,|$)/i.test(current))
    reply.header('vary', `${current}, Origin`);
}
