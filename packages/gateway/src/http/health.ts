/** Liveness, readiness and metrics. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';

export function healthRoutes(app: FastifyInstance, deps: Deps): void {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const checks: Record<string, 'ok' | 'down'> = {};
    try {
      await deps.store.ping();
      checks['database'] = 'ok';
    } catch {
      checks['database'] = 'down';
    }
    const ready = Object.values(checks).every((v) => v === 'ok');
    reply.code(ready ? 200 : 503).header('cache-control', 'no-store');
    // The x402 v2 fee payer is reported, not required: SPEC payments work without it.
    const sponsor = deps.sponsor ? deps.sponsor.status() : undefined;
    if (sponsor && sponsor.state === 'unknown') await deps.sponsor?.refresh();
    return {
      status: ready ? 'ready' : 'not_ready',
      checks,
      ...(deps.sponsor ? { sponsor: deps.sponsor.status() } : {}),
    };
  });

  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
