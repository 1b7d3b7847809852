/**
 * The one error renderer over Fastify: every error body comes from errors.ts (the
 * registry, the flat and the OpenAI-style shapes); this file only sends them.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorCode, errorAnswer } from '../errors.ts';

export function sendError(
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): FastifyReply {
  const answer = errorAnswer(reply.request.url, code, message, String(reply.request.id), extra);
  reply.code(answer.status).headers({ ...answer.headers, ...headers });
  return reply.send(answer.body);
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
