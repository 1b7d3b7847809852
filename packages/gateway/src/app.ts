/**
 * Composition root: the only file that picks concrete implementations (store
 * backend, chain verifiers). `buildApp` returns a Fastify app without listening.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { ChainId, ChainVerifier } from './chains/chain.ts';
import type { Config } from './config.ts';
import { keyRing } from './crypto/keys.ts';
import { createSecretBox } from './crypto/secret-box.ts';
import type { Deps } from './deps.ts';
import { installErrorHandling } from './errors.ts';
import { healthRoutes } from './http/health.ts';
import { loggerOptions } from './logger.ts';
import { createMetrics } from './metrics.ts';
import { openStore } from './store/open-store.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Route family for metrics labels: bounded cardinality, no slugs or ids. */
function routeFamily(url: string): string {
  if (url.startsWith('/p/')) return 'marketplace';
  if (url.startsWith('/v1/')) return url.split('/', 3)[2]?.split('?')[0] ?? 'v1';
  return 'other';
}

export async function buildApp(deps: Deps, opts: { logger?: boolean } = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger === false ? false : loggerOptions(deps.config.logLevel),
    bodyLimit: deps.config.maxBodyBytes,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : `req_${randomUUID()}`;
    },
    trustProxy: false,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 512 },
  });
  installErrorHandling(app);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = routeFamily(request.url);
    deps.metrics.httpRequests.inc({ route, method: request.method, status: String(reply.statusCode) });
    deps.metrics.httpDuration.observe({ route }, reply.elapsedTime / 1000);
  });

  healthRoutes(app, deps);
  return app;
}

export interface Gateway {
  app: FastifyInstance;
  deps: Deps;
  close(): Promise<void>;
}

/** Builds the production gateway for a config: opens the store, picks verifiers, builds the app. */
export async function createGateway(config: Readonly<Config>, opts: { logger?: boolean } = {}): Promise<Gateway> {
  if (!config.secret) throw new Error('createGateway needs config.secret (sandbox mode generates one)');
  const store = await openStore(config.databaseUrl);
  const verifiers = await createVerifiers(config);
  const deps: Deps = {
    config,
    store,
    metrics: createMetrics(),
    verifiers,
    secretBox: createSecretBox(keyRing(config.secret, config.previousSecret, 'origin-secrets/v1')),
    now: Date.now,
  };
  const app = await buildApp(deps, opts);
  return {
    app,
    deps,
    async close() {
      await app.close();
      await store.close();
    },
  };
}

async function createVerifiers(config: Readonly<Config>): Promise<Partial<Record<ChainId, ChainVerifier>>> {
  const verifiers: Partial<Record<ChainId, ChainVerifier>> = {};
  if (config.solanaRpcUrl) {
    const { createSolanaVerifier } = await import('./chains/solana/index.ts');
    verifiers.solana = createSolanaVerifier({
      rpcUrl: config.solanaRpcUrl,
      network: config.chainNetwork,
      commitment: config.solanaCommitment,
    });
  }
  if (config.suiRpcUrl) {
    const { createSuiVerifier } = await import('./chains/sui/index.ts');
    verifiers.sui = createSuiVerifier({ rpcUrl: config.suiRpcUrl, network: config.chainNetwork });
  }
  return verifiers;
}
