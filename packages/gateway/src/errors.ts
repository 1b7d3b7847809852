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
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

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
export const TOLLGATE_ROUTE_SEGMENTS: ReadonlySet<string> = new Set(['auth', 'projects', 'directory']);

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

export function sendError(
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): FastifyReply {
  reply.code(ERROR_STATUS[code]).headers({ 'cache-control': 'no-store', ...headers });
  const requestId = String(reply.request.id);
  const openAi = code !== 'payment_required' && usesOpenAiErrors(reply.request.url);
  return reply.send(
    openAi ? openAiErrorBody(code, message, requestId, extra) : errorBody(code, message, requestId, extra),
  );
}

/** Maps Fastify's own errors (parsing, limits, validation) to our codes; never leaks a stack. */
function classify(err: FastifyError): { code: ErrorCode; message: string; extra?: Record<string, unknown> } {
  if (err.validation) {
    const first = err.validation[0];
    const params = (first?.params ?? {}) as { missingProperty?: string; additionalProperty?: string };
    const field = params.additionalProperty ?? params.missingProperty;
    const where = [first?.instancePath, field].filter(Boolean).join('/');
    return {
      code: 'invalid_request',
      message: `${err.validationContext ?? 'request'}${where ? ` ${where}` : ''}: ${first?.message ?? 'invalid'}`,
    };
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'body_too_large', message: 'request body is too large' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { code: 'unsupported_media_type', message: 'unsupported content type' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return { code: 'invalid_request', message: 'request body is not valid JSON' };
    // PostgreSQL refuses a NUL character in text (SQLSTATE 22021): the input's fault, not ours.
    case '22021':
      return { code: 'invalid_request', message: 'text must not contain NUL characters' };
  }
  if (err instanceof SyntaxError)
    return { code: 'invalid_request', message: 'request body is not valid JSON' };
  const status = err.statusCode ?? 500;
  if (status === 413) return { code: 'body_too_large', message: 'request body is too large' };
  if (status === 415) return { code: 'unsupported_media_type', message: 'unsupported content type' };
  if (status === 404) return { code: 'not_found', message: 'not found' };
  if (status === 405) return { code: 'method_not_allowed', message: 'method not allowed' };
  if (status >= 400 && status < 500) return { code: 'invalid_request', message: 'invalid request' };
  return { code: 'internal_error', message: 'internal error' };
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof ApiError) return sendError(reply, err.code, err.message, err.extra, err.headers);
    const { code, message, extra } = classify(err);
    if (code === 'internal_error') request.log.error({ err }, 'unhandled error');
    // Only the codes: a parser's message can quote the request body, which is the caller's, not the log's.
    else request.log.info({ code, fastifyCode: err.code }, 'request rejected');
    return sendError(reply, code, message, extra);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 'not_found', `no route for ${request.method} ${request.url.split('?')[0]}`),
  );
}
