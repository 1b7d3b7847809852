/**
 * Turning an admission into HTTP, shared by every paid route (marketplace, inference,
 * conversations): 402s, errors and replays end the request here.
 */
import { encodePaymentRequired, type PaymentRequirement } from '@tollgate/protocol';
import type { FastifyReply } from 'fastify';
import { decimal } from '../decimal.ts';
import type { ErrorCode } from '../errors.ts';
import { requirementJson } from '../payments/requirement.ts';
import type { Admission, PaidRequest, RetryTerms } from '../payments/settle.ts';
import { accessLogFor } from './access-log.ts';
import { sendError } from './error-handling.ts';

/** Marks a stored response whose body was too large to keep for replays. */
export const NOT_RETAINED = 'x-tollgate-not-retained';

/**
 * Answers the admissions that end the request at the gate (402, errors, replays).
 * Returns null for `free` and `paid`, which the caller serves.
 */
export function answerAdmission(reply: FastifyReply, admission: Admission): FastifyReply | null {
  switch (admission.kind) {
    case 'challenge': {
      const { headers, body } = challengeResponse(admission, String(reply.request.id));
      reply.code(402).headers(headers);
      if (typeof body !== 'string') return reply.send(body);
      // Already JSON (spliced from the quote's fixed parts): the access log's code is set here,
      // as a string body skips the preSerialization hook that reads it from an object.
      accessLogFor(reply.request).code = 'payment_required';
      return reply.send(body);
    }
    case 'error':
      return sendError(reply, admission.code, admission.message, admission.extra, admission.headers);
    case 'replay': {
      const { response } = admission;
      if (response.headers[NOT_RETAINED]) {
        return sendError(
          reply,
          'conflict',
          'this payment was already redeemed; its response was too large to keep',
          { reason: 'response_not_retained' },
        );
      }
      reply.code(response.status).headers(response.headers);
      reply.headers(admission.receiptHeaders).header('x-tollgate-replay', 'true');
      return reply.send(Buffer.from(response.body));
    }
    case 'free':
    case 'paid':
      return null;
  }
}

/**
 * A 402's headers and body, for the route (answerAdmission) and the fast path (fast-unpaid.ts):
 * `PAYMENT-REQUIRED` when v2 is offered, no-store, and the body's JSON with the request id (its
 * type and length too), or, for a requirement with a reason added, the body as an object with
 * the request id, which the caller serializes (content-type: JSON) itself.
 *
 * `ascii`: the JSON text is all ASCII (its UTF-8 length is its length in characters), so its
 * UTF-8 bytes are its Latin-1 bytes. Node writes a Latin-1 string to the socket straight from
 * its pieces; as UTF-8 it first copies the whole answer (headers and body, some 2.5 KB, joined
 * from a dozen pieces) into one flat string, then encodes that.
 */
export function challengeResponse(
  admission: Extract<Admission, { kind: 'challenge' }>,
  requestId: string,
): {
  headers: Record<string, string>;
  body: string | (PaymentRequirement & { requestId: string });
  ascii: boolean;
} {
  const headers: Record<string, string> = {};
  if (admission.v2) headers['payment-required'] = encodePaymentRequired(admission.v2);
  headers['cache-control'] = 'no-store';
  const issued = admission.body;
  if ('requirement' in issued) return { headers, body: { ...issued.requirement, requestId }, ascii: false };
  const { json, bytes } = requirementJson(issued.jsonHead, issued.jsonHeadBytes, requestId);
  headers['content-type'] = 'application/json; charset=utf-8';
  // Counted from its parts: reading the text whole to count it would copy it once more.
  headers['content-length'] = decimal(bytes);
  return { headers, body: json, ascii: bytes === json.length };
}

/** The error of a paid attempt whose upstream failed: retryable, with the retry window and failed receipt. */
export function sendRetryable(
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  terms: RetryTerms,
  extra: Record<string, unknown> = {},
): FastifyReply {
  return sendError(
    reply,
    code,
    `${message}; retry with the same X-PAYMENT in ${terms.retryAfterSec} s`,
    { ...extra, retryable: true },
    terms.headers,
  );
}

/**
 * A v2 payment whose settlement failed after the upstream answered: the answer is
 * withheld and the payer charged nothing (x402 v2: 402 with `PAYMENT-RESPONSE`).
 */
export function sendSettlementFailed(reply: FastifyReply, paid: PaidRequest): FastifyReply {
  const f = paid.settlementFailure;
  return sendError(
    reply,
    'payment_required',
    `the payment could not be settled (${f?.message ?? 'unknown'}); nothing was charged`,
    { reason: f?.reason ?? 'settlement_failed' },
    f?.headers ?? {},
  );
}
