/**
 * Opaque bearer tokens: 32 random bytes, base64url, with a `tg_` prefix (so
 * secret scanners can spot a leaked one). Only the SHA-256 hash is stored, so a
 * database leak yields no usable token.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const ACCESS_TOKEN_PREFIX = 'tg_';
export const ACCESS_TOKEN_PATTERN = /^tg_[A-Za-z0-9_-]{43}$/;

export function newAccessToken(): string {
  return ACCESS_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Constant-time string equality (compares fixed-length digests, so lengths do not leak either). */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}
