/**
 * One vocabulary for everything that can go wrong talking to an origin, so the paid route
 * can map it to 502/504 and decide retryability without knowing undici's error zoo.
 */
import type { AddressCategory } from './address-policy.ts';

export type UpstreamFailure = 'upstream_timeout' | 'upstream_error' | 'blocked_address';

export const BLOCKED_ADDRESS_CODE = 'TOLLGATE_BLOCKED_ADDRESS';
export const UPSTREAM_TIMEOUT_CODE = 'TOLLGATE_UPSTREAM_TIMEOUT';
export const CLIENT_ABORTED_CODE = 'TOLLGATE_CLIENT_ABORTED';
export const RESPONSE_TOO_LARGE_CODE = 'TOLLGATE_RESPONSE_TOO_LARGE';

/** Raised by the guarded connector; the message names no address so it is safe to log or show. */
export class BlockedAddressError extends Error {
  override readonly name = 'BlockedAddressError';
  readonly code = BLOCKED_ADDRESS_CODE;
  readonly category: AddressCategory;
  /** The offending address, for server-side logs only. */
  readonly address: string;
  constructor(address: string, category: AddressCategory) {
    super(`origin resolves to a non-public address (${category})`);
    this.address = address;
    this.category = category;
  }
}

/** What a forwarded response body stream is destroyed with when the gateway ends it. */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  readonly kind: UpstreamFailure;
  readonly code: string;
  constructor(kind: UpstreamFailure, code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
    this.code = code;
  }
}

const TIMEOUT_CODES = new Set([
  UPSTREAM_TIMEOUT_CODE,
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

/**
 * Maps any error seen while forwarding (request promise or body stream) to a failure kind
 * plus a short detail code. The detail never contains addresses or secrets.
 */
export function classifyUpstreamError(err: unknown): { error: UpstreamFailure; detail: string } {
  if (err instanceof UpstreamError) return { error: err.kind, detail: err.code };
  if (err instanceof BlockedAddressError) return { error: 'blocked_address', detail: err.category };
  const code = errorCode(err);
  if (code === BLOCKED_ADDRESS_CODE) return { error: 'blocked_address', detail: code };
  if (TIMEOUT_CODES.has(code)) return { error: 'upstream_timeout', detail: code };
  if (err instanceof AggregateError && err.errors.some((e) => TIMEOUT_CODES.has(errorCode(e)))) {
    return { error: 'upstream_timeout', detail: 'ETIMEDOUT' };
  }
  return { error: 'upstream_error', detail: code };
}

/** Normalises to an UpstreamError (keeping the original as `cause`). */
export function toUpstreamError(err: unknown): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const { error, detail } = classifyUpstreamError(err);
  return new UpstreamError(error, detail, `${error}: ${detail}`, { cause: err });
}

function errorCode(err: unknown): string {
  if (err !== null && typeof err === 'object') {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    const name = (err as { name?: unknown }).name;
    if (typeof name === 'string' && name !== '' && name !== 'Error') return name;
  }
  return 'unknown';
}

/** What a body that closed before its end fails with (as Node's own streams name it). */
export function prematureCloseError(): Error {
  return Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}
