/**
 * The authenticated caller of a provider route, resolved once in an onRequest
 * hook (before the body is parsed, so an anonymous caller learns nothing about
 * body validation) and read by the handlers.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.ts';
import { authenticate, type Principal } from '../authenticate.ts';

const principals = new WeakMap<FastifyRequest, Principal>();

/** Makes every route of `scope` require a bearer token (owner session or operator). */
export function requireAuthentication(scope: FastifyInstance, deps: Deps): void {
  scope.addHook('onRequest', async (request) => {
    principals.set(request, await authenticate(request, deps));
  });
}

export function principalOf(request: FastifyRequest): Principal {
  const p = principals.get(request);
  if (!p) throw new Error('principalOf called on a route without requireAuthentication');
  return p;
}
