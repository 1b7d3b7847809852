/**
 * The Fastify app over the dependencies: every route family, the error renderer, the
 * access log, CORS. app.ts (the composition root) builds the dependencies and calls this.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { randomUuid } from '../crypto/random-pool.ts';
import type { Deps } from '../deps.ts';
import type { SandboxChains } from '../sandbox-mode.ts';
import { serverTimeoutOptions } from '../server-options.ts';
import { installAccessLog } from './access-log.ts';
import { authRoutes } from './auth.ts';
import { conversationRoutes } from './conversations.ts';
import { corsAndNosniff, corsPolicy } from './cors.ts';
import { directoryRoutes } from './directory.ts';
import { discoveryRoutes } from './discovery.ts';
import { installErrorHandling } from './error-handling.ts';
import { createFastUnpaid, type FastOutcome } from './fast-unpaid.ts';
import { healthRoutes } from './health.ts';
import { inferenceRoutes } from './inference.ts';
import { marketplaceRoutes } from './marketplace.ts';
import { mcpRoutes } from './mcp.ts';
import { meRoutes } from './me-routes.ts';
import { openApiRoutes, registerOpenApi } from './openapi.ts';
import { operatorPaymentRoutes } from './operator-payment-routes.ts';
import { providerRoutes } from './provider.ts';
import { createRateLimiter, rateLimit } from './rate-limit.ts';
import { lazyRequestLogger } from './request-logger.ts';
import { sandboxRoutes } from './sandbox.ts';
import { closeConnectionsAfterLastResponse } from './shutdown.ts';
import { webRoutes } from './web.ts';

/** The HTTP app the gateway serves. */
export type HttpApp = FastifyInstance;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** A request's id: the client's `x-request-id` when it is a plain token, else a new one. */
function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUuid('req_');
}

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
    genReqId: requestIdOf,
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
  // Fastify answers 503 from when close begins; the fast path leaves those requests to it.
  // Registered first, so it runs right after Fastify marks itself closing, before any I/O.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // First: /openapi.json and /docs learn every route from the onRoute hook.
  await registerOpenApi(app, deps);
  // Before the not-found handler is set, so that 404s get the access log's hooks too.
  const recordAccess = installAccessLog(app, deps.metrics);
  installErrorHandling(app);
  closeConnectionsAfterLastResponse(app);

  // Callback style: an async hook costs a promise per request on every route.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  // Before rate limiting: preflights are answered first, and a 429 carries CORS headers too.
  const cors = corsPolicy(deps.config);
  const limiter = createRateLimiter(deps);
  corsAndNosniff(app, cors);
  rateLimit(app, limiter);
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

  // The unpaid /p 402 and free forward are answered before Fastify (fast-unpaid.ts);
  // everything else reaches it.
  const fast = createFastUnpaid({
    deps,
    cors,
    limiter,
    record: recordAccess,
    requestId: requestIdOf,
    closing: () => closing,
  });
  fastPaths.set(app, fast);
  putInFront(app, fast.handle, deps.log);
  return app;
}

/** The app's fast path for unpaid /p requests (tests read how many it answered). */
const fastPaths = new WeakMap<FastifyInstance, { readonly answered: number }>();
export function fastUnpaidAnswered(app: FastifyInstance): number {
  return fastPaths.get(app)?.answered ?? 0;
}

/**
 * Runs `first` before Fastify's handler on the app's server: Fastify serves what it declines.
 * Not `serverFactory`: with it Fastify skips the second address of a host name such as
 * `localhost` (::1 and 127.0.0.1), and it would have to copy Fastify's own server setup
 * (timeouts, server-options.ts). A second address's server keeps Fastify's handler alone.
 * app.inject() never reaches the server, so it always takes Fastify's path.
 */
function putInFront(
  app: FastifyInstance,
  first: (req: IncomingMessage, res: ServerResponse, again?: boolean) => FastOutcome,
  log: Deps['log'],
): void {
  const server = app.server;
  const handlers = server.listeners('request');
  const fastify = handlers[0] as ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  if (handlers.length !== 1 || fastify === undefined) {
    throw new Error(`expected Fastify's one request handler on the server, found ${handlers.length}`);
  }
  server.removeListener('request', fastify);
  const serve = (req: IncomingMessage, res: ServerResponse, again: boolean): void => {
    let taken: FastOutcome;
    try {
      taken = first(req, res, again);
    } catch (err) {
      // A throw here would end the process. Usually nothing was sent yet (the answer is
      // written last), so the route serves the request as it would any other; a throw after
      // the answer went out (recording it) only ends that connection.
      // The path only: a query may carry a caller's secret (the access line drops it too).
      const path = (req.url ?? '').split('?', 1)[0];
      if (res.headersSent) {
        log.error(
          { err, method: req.method, path },
          'fast path failed after answering; the connection is closed',
        );
        res.destroy();
        return;
      }
      log.error({ err, method: req.method, path }, 'fast path failed; the request goes to the route');
      taken = false;
    }
    if (taken === true) return;
    if (taken === false) {
      fastify(req, res);
      return;
    }
    // It waits for what it needs (a catalogue load), then is asked again; a client that
    // left meanwhile is owed nothing (and gets no access line, as on every route).
    const resume = () => {
      if (!res.destroyed) serve(req, res, true);
    };
    taken.then(resume, resume);
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => serve(req, res, false));
}
