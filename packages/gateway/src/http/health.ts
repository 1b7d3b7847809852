/** Liveness, readiness (database and chain nodes, cached: health/readiness.ts) and metrics. */
import type { FastifyInstance } from 'fastify';
import { safeEqual } from '../auth/tokens.ts';
import type { Deps } from '../deps.ts';
import { chainChecks } from '../health/chain-probes.ts';
import { createReadiness, type Readiness } from '../health/readiness.ts';
import { sendError } from './error-handling.ts';

const BEARER = /^Bearer +([\x21-\x7e]{1,512})\s*$/i;

export function healthRoutes(app: FastifyInstance, deps: Deps): void {
  app.get('/healthz', async () => ({ status: 'ok' }));

  // Built at the first probe: the checks of this config's database and chain nodes,
  // answered from a few-seconds cache so /readyz cannot hammer the nodes.
  let readiness: Readiness | null = null;
  app.get('/readyz', async (_request, reply) => {
    readiness ??= createReadiness(
      [{ name: 'database', run: () => deps.store.ping() }, ...chainChecks(deps.config)],
      {
        now: deps.now,
        // The x402 v2 fee payer is reported, not required: SPEC payments work without it.
        alongside: async () => {
          if (deps.sponsor?.status().state === 'unknown') await deps.sponsor.refresh();
        },
        onChange: (check, state, reason) =>
          state === 'down'
            ? app.log.warn({ check, reason }, `readiness: ${check} is down`)
            : app.log.info({ check }, `readiness: ${check} is back`),
      },
    );
    const report = await readiness.report();
    reply.code(report.ready ? 200 : 503).header('cache-control', 'no-store');
    return {
      status: report.ready ? 'ready' : 'not_ready',
      checks: report.checks,
      ...(Object.keys(report.reasons).length ? { reasons: report.reasons } : {}),
      ...(deps.sponsor ? { sponsor: deps.sponsor.status() } : {}),
    };
  });

  // The operator's only: labels name projects and endpoints (docs/operations.md).
  app.get('/metrics', async (request, reply) => {
    const admin = deps.config.adminToken;
    const token = BEARER.exec(request.headers.authorization ?? '')?.[1];
    if (!admin || token === undefined || !safeEqual(token, admin)) {
      return sendError(
        reply,
        'unauthorized',
        'the metrics need the operator token: Authorization: Bearer <TOLLGATE_ADMIN_TOKEN>',
        { reason: request.headers.authorization ? 'invalid_token' : 'missing_token' },
        { 'www-authenticate': 'Bearer' },
      );
    }
    reply.header('content-type', deps.metrics.registry.contentType).header('cache-control', 'no-store');
    return deps.metrics.registry.metrics();
  });
}
