/**
 * Who is calling: a signed-in wallet owner or the operator. Reads only the
 * `Authorization: Bearer` header; a token in a query string is never looked at,
 * because query strings end up in logs, proxies and browser history.
 */
import type { FastifyRequest } from 'fastify';
import { ACCESS_TOKEN_PATTERN, hashToken, safeEqual } from '../auth/tokens.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import type { Owner } from '../store/store.ts';

export type Principal = { kind: 'owner'; owner: Owner } | { kind: 'operator' };

const BEARER = /^Bearer +([\x21-\x7e]{1,512})$/i;

function unauthorized(message: string, reason: string): ApiError {
  return new ApiError('unauthorized', message, { reason }, { 'www-authenticate': 'Bearer' });
}

/** The bearer token from the Authorization header, or null when there is none. Throws on a malformed header. */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (header === undefined || header === '') return null;
  const m = BEARER.exec(header.trim());
  if (!m) throw unauthorized('the Authorization header must be "Bearer <token>"', 'invalid_token');
  return m[1]!;
}

/**
 * Resolves the caller from `Authorization: Bearer <token>`.
 * Throws ApiError('unauthorized') with reason `missing_token` or `invalid_token`.
 */
export async function authenticate(request: FastifyRequest, deps: Deps): Promise<Principal> {
  const token = bearerToken(request);
  if (token === null) throw unauthorized('this route needs Authorization: Bearer <token>', 'missing_token');
  const admin = deps.config.adminToken;
  if (admin && safeEqual(token, admin)) return { kind: 'operator' };
  if (ACCESS_TOKEN_PATTERN.test(token)) {
    const session = await deps.store.auth.session(hashToken(token), deps.now());
    if (session) return { kind: 'owner', owner: session.owner };
  }
  throw unauthorized('the access token is unknown, expired or revoked', 'invalid_token');
}
