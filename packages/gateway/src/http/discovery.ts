/**
 * Discovery (DESIGN §4.12, docs/discovery.md): `GET /discovery/resources` lists what a
 * stock x402 v2 client can pay, in the x402 bazaar shape; `GET /.well-known/x402` is a
 * manifest for agents. Both public and cacheable for a few seconds.
 *
 * The query is checked strictly: a wrong type, a value out of range, a repeated or an
 * unknown parameter is 400 `invalid_request`, never a silently ignored filter.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { createDiscovery, type DiscoveryFilter, wellKnownManifest } from '../marketplace/discovery.ts';
import { invalid } from '../providers/rules.ts';
import { useStrictValidation } from './providers/strict-schema.ts';

export const DISCOVERY_DEFAULT_LIMIT = 20;
export const DISCOVERY_MAX_LIMIT = 100;
/** Far beyond any catalogue; bounds the number a caller can make us parse. */
const MAX_OFFSET = 1_000_000_000;

const text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max });

interface ResourcesQuery {
  type?: string;
  limit: number;
  offset: number;
  provider?: string;
  'metadata[provider]'?: string;
  category?: string;
  'metadata[category]'?: string;
  network?: string;
  scheme?: string;
  payTo?: string;
  extensions?: string;
}

export function discoveryRoutes(app: FastifyInstance, deps: Deps): void {
  const discovery = createDiscovery(deps);
  app.register(async (scope) => {
    useStrictValidation(scope);
    scope.addHook('onSend', async (_request, reply) => {
      if (reply.statusCode === 200) reply.header('cache-control', 'public, max-age=10');
    });

    scope.get<{ Querystring: ResourcesQuery }>(
      '/discovery/resources',
      {
        schema: {
          querystring: {
            type: 'object',
            properties: {
              type: text(32),
              limit: {
                type: 'integer',
                minimum: 1,
                maximum: DISCOVERY_MAX_LIMIT,
                default: DISCOVERY_DEFAULT_LIMIT,
              },
              offset: { type: 'integer', minimum: 0, maximum: MAX_OFFSET, default: 0 },
              provider: text(100),
              'metadata[provider]': text(100),
              category: text(64),
              'metadata[category]': text(64),
              network: text(128),
              scheme: text(32),
              payTo: text(128),
              extensions: text(64),
            },
            additionalProperties: false,
          },
        },
      },
      async (request) => {
        const q = request.query;
        const filter: DiscoveryFilter = {};
        for (const [key, a, b] of [
          ['provider', q.provider, q['metadata[provider]']],
          ['category', q.category, q['metadata[category]']],
        ] as const) {
          if (a !== undefined && b !== undefined && a !== b) {
            throw invalid(`${key} and metadata[${key}] disagree`, 'conflicting_parameters');
          }
          const value = a ?? b;
          if (value !== undefined) filter[key] = value;
        }
        for (const key of ['type', 'network', 'scheme', 'payTo', 'extensions'] as const) {
          if (q[key] !== undefined) filter[key] = q[key];
        }
        return discovery.page(filter, q.limit, q.offset);
      },
    );

    scope.get('/.well-known/x402', async () => wellKnownManifest(deps, discovery));
  });
}
