/**
 * Per-client-IP token bucket (TOLLGATE_RATE_LIMIT_PER_MIN; 0 = off). Protects the
 * gateway and the chain RPC behind it from a single noisy caller. Per process: with
 * several gateways behind a balancer each enforces its own share.
 *
 * One limiter per app: the Fastify hook and the fast path (fast-unpaid.ts) take from the
 * same buckets, so a caller is counted once per request whichever path answers it.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { sendError } from './error-handling.ts';
import { isInnerCall } from './inner-call.ts';

const MAX_TRACKED = 100_000;

export interface RateLimiter {
  /**
   * Takes a token for a request from `ip` to `url`: 0 when it may proceed (the token is
   * spent), else the Retry-After in seconds (nothing spent). Operator probes are never limited.
   */
  take(ip: string, url: string): number;
  /**
   * Notes that the fast path took `req`'s token before it handed the request to Fastify
   * (after waiting for its catalogue snapshot): the hook does not count it again.
   */
  counted(req: object): void;
  /** Whether counted() noted `req`. */
  wasCounted(req: object): boolean;
}

/** The limiter of TOLLGATE_RATE_LIMIT_PER_MIN, or null when limiting is off. */
export function createRateLimiter(deps: Pick<Deps, 'config' | 'now'>): RateLimiter | null {
  const perMin = deps.config.rateLimitPerMin;
  if (perMin <= 0) return null;
  const ratePerMs = perMin / 60_000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  const countedAlready = new WeakSet<object>();
  return {
    counted(req) {
      countedAlready.add(req);
    },
    wasCounted(req) {
      return countedAlready.has(req);
    },
    take(ip, url) {
      if (url === '/healthz' || url === '/readyz' || url === '/metrics') return 0;
      const now = deps.now();
      let b = buckets.get(ip);
      if (!b) {
        if (buckets.size >= MAX_TRACKED) buckets.delete(buckets.keys().next().value as string);
        b = { tokens: perMin, at: now };
        buckets.set(ip, b);
      }
      b.tokens = Math.min(perMin, b.tokens + (now - b.at) * ratePerMs);
      b.at = now;
      if (b.tokens < 1) return Math.ceil((1 - b.tokens) / ratePerMs / 1000);
      b.tokens -= 1;
      return 0;
    },
  };
}

export function rateLimit(app: FastifyInstance, limiter: RateLimiter | null): void {
  if (limiter === null) return;
  app.addHook('onRequest', async (request, reply) => {
    // Served for a request that was counted already (an MCP tool call).
    if (isInnerCall(request.headers)) return;
    if (limiter.wasCounted(request.raw)) return;
    const retryAfter = limiter.take(request.ip, request.url);
    if (retryAfter > 0) {
      return sendError(
        reply,
        'rate_limited',
        'too many requests from this address',
        {},
        { 'retry-after': String(retryAfter) },
      );
    }
  });
}
