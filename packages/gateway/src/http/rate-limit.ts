/**
 * Per-client-IP token bucket (TOLLGATE_RATE_LIMIT_PER_MIN; 0 = off). Protects the
 * gateway and the chain RPC behind it from a single noisy caller. Per process: with
 * several gateways behind a balancer each enforces its own share.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { sendError } from './error-handling.ts';

const MAX_TRACKED = 100_000;

export function rateLimit(app: FastifyInstance, deps: Deps): void {
  const perMin = deps.config.rateLimitPerMin;
  if (perMin <= 0) return;
  const ratePerMs = perMin / 60_000;
  const buckets = new Map<string, { tokens: number; at: number }>();

  app.addHook('onRequest', async (request, reply) => {
    if (request.url === '/healthz' || request.url === '/readyz' || request.url === '/metrics') return;
    const now = deps.now();
    let b = buckets.get(request.ip);
    if (!b) {
      if (buckets.size >= MAX_TRACKED) buckets.delete(buckets.keys().next().value as string);
      b = { tokens: perMin, at: now };
      buckets.set(request.ip, b);
    }
    b.tokens = Math.min(perMin, b.tokens + (now - b.at) * ratePerMs);
    b.at = now;
    if (b.tokens < 1) {
      const retryAfter = Math.ceil((1 - b.tokens) / ratePerMs / 1000);
      return sendError(
        reply,
        'rate_limited',
        'too many requests from this address',
        {},
        { 'retry-after': String(retryAfter) },
      );
    }
    b.tokens -= 1;
  });
}
