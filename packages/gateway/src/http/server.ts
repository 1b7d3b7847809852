/**
 * The Fastify app over the dependencies: every route family, the error renderer, the
 * access log, CORS. app.ts (the composition root) builds the dependencies and calls this.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Deps } from '../deps.ts';
import type { SandboxChains } from '../sandbox-mode.ts';
import { serverTimeoutOptions } from '../server-options.ts';
import { installAccessLog } from './access-log.ts';
import { authRoutes } from './auth.ts';
import { conversationRoutes } from './conversations.ts';
import { corsAndNosniff } from './cors.ts';
import { directoryRoutes } from './directory.ts';
import { discoveryRoutes } from './discovery.ts';
import { installErrorHandling } from './error-handling.ts';
import { healthRoutes } from './health.ts';
import { inferenceRoutes } from './inference.ts';
import { marketplaceRoutes } from './marketplace.ts';
import { mcpRoutes } from './mcp.ts';
import { meRoutes } from './me-routes.ts';
import { openApiRoutes, registerOpenApi } from './openapi.ts';
import { operatorPaymentRoutes } from './operator-payment-routes.ts';
import { providerRoutes } from './provider.ts';
import { rateLimit } from './rate-limit.ts';
import { lazyRequestLogger } from './request-logger.ts';
import { sandboxRoutes } from './sandbox.ts';
import { webRoutes } from './web.ts';

/** The HTTP app the gateway serves. */
export type HttpApp = FastifyInstance;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * The app over `deps`. It logs through `deps.log`, the one logger (assembleDeps makes
 * it); `logger: false` silences the app's own lines (a silent child of that logger).
 */
export async function buildApp(
  deps: Deps,
  opts: { logger?: boolean; sandbox?: SandboxChains } = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: (opts.logger === false
      ? deps.log.child({}, { level: 'silent' })
      : deps.log) as FastifyBaseLogger,
    bodyLimit: deps.config.maxBodyBytes,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : `req_${randomUUID()}`;
    },
    trustProxy: false,
    return503OnClosing: true,
    // One access line per request (http/access-log.ts) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // request.log becomes a pino child only when something logs through it (request-logger.ts).
    childLoggerFactory: lazyRequestLogger,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 512 },
    // Slow clients: deadlines for headers and request bodies; never for responses.
    ...serverTimeoutOptions(deps.config),
  });
  // First: /openapi.json and /docs learn every route from the onRoute hook.
  await registerOpenApi(app, deps);
  // Before the not-found handler is set, so that 404s get the access log's hooks too.
  installAccessLog(app, deps.metrics);
  installErrorHandling(app);

  // Callback style: an async hook costs a promise per request on every route.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  // Before rate limiting: preflights are answered first, and a 429 carries CORS headers too.
  corsAndNosniff(app, deps.config);
  rateLimit(app, deps);
  healthRoutes(app, deps);
  openApiRoutes(app);
  marketplaceRoutes(app, deps);
  authRoutes(app, deps);
  providerRoutes(app, deps);
  meRoutes(app, deps);
  operatorPaymentRoutes(app, deps);
  directoryRoutes(app, deps);
  discoveryRoutes(app, deps);
  inferenceRoutes(app, deps);
  conversationRoutes(app, deps);
  mcpRoutes(app, deps);
  webRoutes(app, deps);
  if (opts.sandbox) sandboxRoutes(app, deps, opts.sandbox);
  return app;
}
