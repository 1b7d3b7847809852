/**
 * The one error renderer, with the status from the closed registry in
 * @tollgate/protocol (ERROR_STATUS). Two body shapes (docs/errors.md):
 * - Tollgate's `{ error: code, message, requestId, ...extra }` (DESIGN §4.6): /p, the
 *   provider API, sign-in, the directory, and every route outside /v1.
 * - OpenAI's envelope on the OpenAI-style /v1 routes (chat, embeddings, models, pricing,
 *   conversations, and any unknown /v1 path), so OpenAI clients show the message:
 *   `{ error: { message, type, code, param, ...extra }, requestId }`, with `retryable`
 *   also at the top level where protocol clients read it on every route.
 * A 402 `payment_required` is flat everywhere: SPEC §2.1/§7 make `error` that string.
 */
import { ERROR_STATUS, type ErrorCode } from '@tollgate/protocol';

export { ERROR_STATUS, type ErrorCode };

/** OpenAI's error types, plus ours for payments and upstream failures (docs/errors.md). */
export type OpenAiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'payment_error'
  | 'upstream_error'
  | 'server_error';

/** The `type` of each code in the OpenAI envelope; a new code must pick one here. */
export const OPENAI_ERROR_TYPE: Record<ErrorCode, OpenAiErrorType> = {
  payment_required: 'payment_error',
  invalid_payment_header: 'payment_error',
  payment_pending: 'payment_error',
  payment_in_progress: 'payment_error',
  verification_unavailable: 'payment_error',
  endpoint_unavailable: 'upstream_error',
  endpoint_not_found: 'not_found_error',
  upstream_error: 'upstream_error',
  upstream_timeout: 'upstream_error',
  invalid_path: 'invalid_request_error',
  body_too_large: 'invalid_request_error',
  rate_limited: 'rate_limit_error',
  unauthorized: 'authentication_error',
  forbidden: 'permission_error',
  invalid_request: 'invalid_request_error',
  not_found: 'not_found_error',
  conflict: 'invalid_request_error',
  method_not_allowed: 'invalid_request_error',
  unsupported_media_type: 'invalid_request_error',
  model_not_found: 'not_found_error',
  internal_error: 'server_error',
  service_unavailable: 'server_error',
};

/** First path segments under /v1 that answer in the OpenAI envelope (OpenAI's API and ours beside it). */
export const OPENAI_ROUTE_SEGMENTS: ReadonlySet<string> = new Set([
  'chat',
  'embeddings',
  'models',
  'pricing',
  'conversations',
]);
/** First path segments under /v1 that keep Tollgate's flat body: sign-in, the provider API, the directory. */
export const TOLLGATE_ROUTE_SEGMENTS: ReadonlySet<string> = new Set([
  'auth',
  'projects',
  'directory',
  // Payer history and the operator's payment list (issue 13).
  'me',
  'payments',
]);

/**
 * Whether a request URL answers errors in the OpenAI envelope: /v1 except the
 * Tollgate-style segments. An unknown /v1 path does too: it is most likely an OpenAI
 * client asking for an API we do not serve (`/v1/responses`).
 */
export function usesOpenAiErrors(url: string): boolean {
  const m = /^\/v1(?:\/([^/?#]*))?(?:[/?#]|$)/.exec(url);
  return m !== null && !TOLLGATE_ROUTE_SEGMENTS.has(m[1] ?? '');
}

/** Thrown by handlers for an expected failure; rendered by the error handler. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ErrorCode;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;
  constructor(
    code: ErrorCode,
    message: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.code = code;
    this.extra = extra;
    this.headers = headers;
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** Tollgate's flat body (DESIGN §4.6). */
export function errorBody(
  code: ErrorCode,
  message: string,
  requestId: string,
  extra: Record<string, unknown> = {},
) {
  return { error: code, message, requestId, ...extra };
}

/**
 * OpenAI's envelope: what OpenAI's SDKs read (`error.message` becomes the exception's
 * message, `code`, `type` and `param` its fields). Our extra fields (`reason`,
 * `retryable`, `upstreamStatus`, …) go inside `error`, which the SDKs keep as
 * `err.error`; `retryable` is repeated at the top level, where protocol.md tells every
 * payer to look for it.
 */
export function openAiErrorBody(
  code: ErrorCode,
  message: string,
  requestId: string,
  extra: Record<string, unknown> = {},
) {
  const { param, message: _m, type: _t, code: _c, ...rest } = extra;
  return {
    error: {
      message,
      type: OPENAI_ERROR_TYPE[code],
      code,
      param: typeof param === 'string' ? param : null,
      ...rest,
    },
    ...(rest.retryable !== undefined ? { retryable: rest.retryable } : {}),
    requestId,
  };
}

/**
 * The error answer to a request for `url`: status, headers and body (OpenAI's envelope on
 * the /v1 routes that use it, else the flat one). The one renderer of every error the
 * gateway sends: Fastify's (http/error-handling.ts) and the fast path's (http/fast-unpaid.ts).
 */
export function errorAnswer(
  url: string,
  code: ErrorCode,
  message: string,
  requestId: string,
  extra: Record<string, unknown> = {},
): { status: number; headers: { 'cache-control': string }; body: object } {
  const openAi = code !== 'payment_required' && usesOpenAiErrors(url);
  return {
    status: ERROR_STATUS[code],
    headers: { 'cache-control': 'no-store' },
    body: openAi
      ? openAiErrorBody(code, message, requestId, extra)
      : errorBody(code, message, requestId, extra),
  };
}
