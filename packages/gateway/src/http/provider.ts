/**
 * Provider API (DESIGN §4.7): projects, APIs, endpoints and rails. Every route
 * needs a bearer token (a wallet session or the operator token) and validates
 * its body strictly; see docs/provider-api.md.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { apiRoutes } from './providers/api-routes.ts';
import { earningsRoutes } from './providers/earnings-routes.ts';
import { endpointRoutes } from './providers/endpoint-routes.ts';
import { requireAuthentication } from './providers/principal.ts';
import { projectRoutes } from './providers/project-routes.ts';
import { railRoutes } from './providers/rail-routes.ts';
import { useStrictValidation } from './providers/strict-schema.ts';

export function providerRoutes(app: FastifyInstance, deps: Deps): void {
  app.register(async (scope) => {
    useStrictValidation(scope);
    requireAuthentication(scope, deps);
    scope.addHook('onSend', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
    });
    projectRoutes(scope, deps);
    apiRoutes(scope, deps);
    endpointRoutes(scope, deps);
    railRoutes(scope, deps);
    earningsRoutes(scope, deps);
  });
}
