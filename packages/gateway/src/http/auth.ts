/** Wallet sign-in routes (DESIGN §4.8): challenge, verify, logout, and who-am-I. */
import type { FastifyInstance } from 'fastify';
import { normalizeAddress } from '../auth/addresses.ts';
import { completeSignIn, issueChallenge } from '../auth/sign-in.ts';
import { hashToken } from '../auth/tokens.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import type { Chain } from '../store/store.ts';
import { authenticate, bearerToken } from './authenticate.ts';
import { objectSchema, useStrictValidation } from './providers/strict-schema.ts';

const chain = { type: 'string', enum: ['sui', 'solana'] };
const address = { type: 'string', minLength: 1, maxLength: 128 };

function canonicalAddress(c: Chain, raw: string): string {
  const a = normalizeAddress(c, raw);
  if (!a) {
    throw new ApiError(
      'invalid_request',
      c === 'sui'
        ? 'address must be 0x followed by 64 hex digits'
        : 'address must be a base58 32-byte Solana address',
      { reason: 'invalid_address' },
    );
  }
  return a;
}

export function authRoutes(app: FastifyInstance, deps: Deps): void {
  app.register(async (scope) => {
    useStrictValidation(scope);
    scope.addHook('onSend', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
    });

    scope.post<{ Body: { chain: Chain; address: string } }>(
      '/v1/auth/challenge',
      { schema: { body: objectSchema({ chain, address }, ['chain', 'address']) } },
      async (request) => {
        const { chain: c, address: raw } = request.body;
        return issueChallenge(deps, c, canonicalAddress(c, raw));
      },
    );

    scope.post<{ Body: { chain: Chain; address: string; message: string; signature: string } }>(
      '/v1/auth/verify',
      {
        schema: {
          body: objectSchema(
            {
              chain,
              address,
              message: { type: 'string', minLength: 1, maxLength: 4096 },
              signature: { type: 'string', minLength: 1, maxLength: 4096 },
            },
            ['chain', 'address', 'message', 'signature'],
          ),
        },
      },
      async (request) => {
        const b = request.body;
        const issued = await completeSignIn(deps, { ...b, address: canonicalAddress(b.chain, b.address) });
        request.log.info({ chain: issued.owner.chain, address: issued.owner.address }, 'signed in');
        return issued;
      },
    );

    scope.post('/v1/auth/logout', async (request, reply) => {
      const principal = await authenticate(request, deps);
      if (principal.kind === 'operator') {
        throw new ApiError(
          'invalid_request',
          'the operator token is configured, not issued; it cannot be revoked',
          {
            reason: 'operator_token',
          },
        );
      }
      await deps.store.auth.revokeSession(hashToken(bearerToken(request)!));
      return reply.code(204).send();
    });

    scope.get('/v1/auth/session', async (request) => {
      const principal = await authenticate(request, deps);
      return principal.kind === 'operator' ? { kind: 'operator' } : { kind: 'owner', owner: principal.owner };
    });
  });
}
