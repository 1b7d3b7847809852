/**
 * Turning a gate outcome into HTTP, shared by every paid route (marketplace,
 * inference, conversations), and keeping a lease alive while an upstream works.
 */
import { decodePaymentReceipt, encodePaymentReceipt } from '@tollgate/protocol';
import type { FastifyReply } from 'fastify';
import { sendError } from '../errors.ts';
import type { GateOutcome, PaidLease } from './gate.ts';

/** Marks a stored response whose body was too large to keep for replays. */
export const NOT_RETAINED = 'x-tollgate-not-retained';

/** Renew well before the lease runs out, and at least this often. */
const MAX_RENEW_EVERY_MS = 10_000;

/**
 * Answers the outcomes that end the request at the gate (402, errors, replays).
 * Returns null for `free` and `paid`, which the caller serves.
 */
export function answerGateOutcome(reply: FastifyReply, outcome: GateOutcome): FastifyReply | null {
  switch (outcome.kind) {
    case 'challenge':
      return reply
        .code(402)
        .header('cache-control', 'no-store')
        .send({ ...outcome.requirement, requestId: reply.request.id });
    case 'error':
      return sendError(reply, outcome.code, outcome.message, outcome.extra, outcome.headers);
    case 'replay': {
      const { response } = outcome;
      if (response.headers[NOT_RETAINED]) {
        return sendError(
          reply,
          'conflict',
          'this payment was already redeemed; its response was too large to keep',
          {
            reason: 'response_not_retained',
          },
        );
      }
      reply.code(response.status).headers(response.headers);
      reply.header('x-payment-response', outcome.receiptHeader).header('x-tollgate-replay', 'true');
      return reply.send(Buffer.from(response.body));
    }
    case 'free':
    case 'paid':
      return null;
  }
}

/** The receipt of a payment that was verified but not delivered (success: false, retryable). */
export function failedReceipt(lease: PaidLease): string {
  return encodePaymentReceipt({ ...decodePaymentReceipt(lease.receiptHeader), success: false });
}

/** Keeps a lease (of `leaseMs`) alive while a slow upstream works; returns the stopper. */
export function keepLeaseAlive(lease: PaidLease | null, leaseMs: number): () => void {
  if (!lease) return () => {};
  const every = Math.max(100, Math.min(MAX_RENEW_EVERY_MS, Math.floor(leaseMs / 3)));
  const t = setInterval(() => void lease.renew().catch(() => {}), every);
  t.unref();
  return () => clearInterval(t);
}
