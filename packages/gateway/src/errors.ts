/**
 * The one error renderer. Every error body is `{ error, message, requestId, ...extra }`
 * with the status from the closed registry in @tollgate/protocol (ERROR_STATUS).
 */
import { ERROR_STATUS, type ErrorCode } from '@tollgate/protocol';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export { ERROR_STATUS, type ErrorCode };

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

export function errorBody(
  code: ErrorCode,
  message: string,
  requestId: string,
  extra: Record<string, unknown> = {},
) {
  return { error: code, message, requestId, ...extra };
}

export function sendError(
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): FastifyReply {
  reply.code(ERROR_STATUS[code]).headers({ 'cache-control': 'no-store', ...headers });
  return reply.send(errorBody(code, message, String(reply.request.id), extra));
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
    else request.log.info({ code, reason: err.message }, 'request rejected');
    return sendError(reply, code, message, extra);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 'not_found', `no route for ${request.method} ${request.url.split('?')[0]}`),
  );
}
