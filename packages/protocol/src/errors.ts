/**
 * The closed list of error codes (DESIGN §4.6) and their HTTP statuses. The gateway
 * renders only these; the docs test checks the API docs list exactly these.
 */
export const ERROR_STATUS = {
  payment_required: 402,
  invalid_payment_header: 400,
  payment_pending: 409,
  payment_in_progress: 409,
  verification_unavailable: 503,
  endpoint_unavailable: 503,
  endpoint_not_found: 404,
  upstream_error: 502,
  upstream_timeout: 504,
  invalid_path: 400,
  body_too_large: 413,
  rate_limited: 429,
  unauthorized: 401,
  forbidden: 403,
  invalid_request: 400,
  not_found: 404,
  conflict: 409,
  method_not_allowed: 405,
  unsupported_media_type: 415,
  model_not_found: 404,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** Raised only by client helpers, never by the server. */
export const CLIENT_ERROR_CODES = [
  'unsupported_chain',
  'payment_limit_exceeded',
  'payment_failed',
  'quote_expired',
  'network_mismatch',
] as const;
export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[number];

/** Codes for malformed protocol values (amounts, proofs). */
export type ProtocolErrorCode =
  | 'invalid_amount'
  | 'invalid_payment_header'
  | 'unsupported_chain'
  | 'invalid_requirement'
  | ClientErrorCode;

/** The one error type the protocol helpers throw. `code` is stable; `message` is for humans. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  readonly code: ProtocolErrorCode;
  constructor(code: ProtocolErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
