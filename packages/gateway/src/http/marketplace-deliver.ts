/**
 * Sends an upstream's deliverable answer to the client and, for a paid request, keeps
 * a copy for replays and settles it (DESIGN §4.5): the answer is read to its end
 * whatever the client does (bounded by the response cap and the endpoint's deadline),
 * stored, and the redemption completed; only an upstream that fails or cuts its body
 * gives the payment back for a retry.
 */
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../errors.ts';
import type { PaidRequest, RetryTerms } from '../payments/settle.ts';
import { readCapped } from '../proxy/forward.ts';
import { classifyUpstreamError, prematureCloseError } from '../proxy/upstream-error.ts';
import type { StoredResponse } from '../store/store.ts';
import { NOT_RETAINED, sendRetryable, sendSettlementFailed } from './respond.ts';

export function flattenHeaders(headers: Record<string, string | string[]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** How a paid delivery ended: the answer stored, or the payment given back (with the terms sent). */
export type Settled = { delivered: true } | { delivered: false; terms: RetryTerms };

export function streamAndSettle(
  reply: FastifyReply,
  status: number,
  headers: Record<string, string | string[]>,
  body: Readable,
  paid: PaidRequest | null,
  maxStoredBytes: number,
  onSettled?: (s: Settled) => void,
): FastifyReply | Promise<FastifyReply> {
  const length = headers['content-length'];
  const declared = typeof length === 'string' ? Number(length) : Number.NaN;
  if (!paid) {
    // A small body of known length goes out in one write (headers + body) instead of a
    // piped stream (headers, then data): most API answers are like that.
    if (Number.isFinite(declared) && declared <= SMALL_BODY_BYTES)
      return sendSmall(reply, status, headers, body);
    reply.code(status).headers(headers);
    return reply.send(body);
  }
  if (Number.isFinite(declared) && declared <= Math.min(maxStoredBytes, BUFFER_FIRST_BYTES)) {
    return bufferCompleteSend(reply, status, headers, body, paid, maxStoredBytes, onSettled);
  }
  return streamThrough(reply, status, headers, body, paid, maxStoredBytes, onSettled);
}

/** Answers of known length up to this size are read whole, then sent in one write (the fast path too). */
export const SMALL_BODY_BYTES = 64 * 1024;
/** Paid answers up to this size are stored before they are sent; larger ones stream. */
const BUFFER_FIRST_BYTES = 1024 * 1024;

type ReadFailure = { code: 'upstream_error' | 'upstream_timeout'; reason: string };

/** Reads a body of declared size whole, or says why it could not (failed, cut, longer than declared). */
async function readWhole(body: Readable, maxBytes: number): Promise<Buffer | ReadFailure> {
  try {
    const bytes = await readCapped(body, maxBytes);
    return bytes === 'too_large' ? { code: 'upstream_error', reason: 'length_mismatch' } : bytes;
  } catch (err) {
    return readFailureOf(err);
  }
}

function readFailureOf(err: unknown): ReadFailure {
  const { error, detail } = classifyUpstreamError(err);
  return { code: error === 'upstream_timeout' ? 'upstream_timeout' : 'upstream_error', reason: detail };
}

/** The upstream failed before any of its answer went out: the payment waits for a retry. */
async function giveBack(
  reply: FastifyReply,
  paid: PaidRequest,
  failure: ReadFailure,
  onSettled?: (s: Settled) => void,
): Promise<FastifyReply> {
  const terms = await paid.fail(failure.reason);
  onSettled?.({ delivered: false, terms });
  return sendRetryable(reply, failure.code, 'the upstream failed while sending its answer', terms, {
    reason: failure.reason,
  });
}

async function sendSmall(
  reply: FastifyReply,
  status: number,
  headers: Record<string, string | string[]>,
  body: Readable,
): Promise<FastifyReply> {
  const bytes = await readWhole(body, SMALL_BODY_BYTES);
  if (!Buffer.isBuffer(bytes)) {
    throw new ApiError(bytes.code, 'the upstream failed while sending its answer', { reason: bytes.reason });
  }
  reply.code(status).headers(headers);
  return reply.send(bytes);
}

/**
 * A body of known, storable size is read whole, stored as delivered, then sent: a
 * retry that arrives the moment the client has the bytes finds it delivered, and a
 * client that lost the connection gets the same bytes by sending the proof again.
 */
async function bufferCompleteSend(
  reply: FastifyReply,
  status: number,
  headers: Record<string, string | string[]>,
  body: Readable,
  paid: PaidRequest,
  maxStoredBytes: number,
  onSettled?: (s: Settled) => void,
): Promise<FastifyReply> {
  const bytes = await readWhole(body, maxStoredBytes);
  if (!Buffer.isBuffer(bytes)) return giveBack(reply, paid, bytes, onSettled);
  // A v2 payment is sent now, with the whole answer in hand; nothing goes out unless it lands.
  if (!(await paid.commit())) return sendSettlementFailed(reply, paid);
  await paid.deliver({ status, headers: flattenHeaders(headers), body: bytes });
  onSettled?.({ delivered: true });
  reply.code(status).headers(headers).headers(paid.receiptHeaders);
  return reply.send(bytes);
}

/**
 * A body of unknown or large size streams to the client while a copy (up to the cap) is
 * kept. If the client leaves, the upstream is still read to its end: the answer is
 * stored and the redemption completed, so the same proof replays it. It is given back
 * for a retry only if the upstream fails or cuts the stream.
 */
async function streamThrough(
  reply: FastifyReply,
  status: number,
  headers: Record<string, string | string[]>,
  body: Readable,
  paid: PaidRequest,
  maxStoredBytes: number,
  onSettled?: (s: Settled) => void,
): Promise<FastifyReply> {
  // A v2 payment is sent after the upstream's headers and before the first byte goes out.
  body.pause();
  if (!(await paid.commit())) {
    // Nobody reads this body any more: a body destroyed with an error emits it,
    // which with no listener would be an uncaught exception that ends the process.
    body.on('error', () => {});
    body.destroy();
    return sendSettlementFailed(reply, paid);
  }
  // The upstream failed while the payment was sent (nobody read the body then): its failure is
  // on the body, and no event will come. The payment waits for a retry, as for any failure.
  const failed = body.errored ?? (body.destroyed && !body.readableEnded ? prematureCloseError() : null);
  if (failed) return giveBack(reply, paid, readFailureOf(failed), onSettled);
  const chunks: Buffer[] = [];
  let kept = 0;
  let tooLarge = false;
  const raw = reply.raw;
  // A client that left before the answer came gets nothing sent; the answer is still read and stored.
  let clientGone = raw.destroyed;
  const out = new PassThrough();
  // An upstream failure is settled below (paid.fail); destroying `out` with it only cuts the
  // client's copy. With no client (never piped), nobody else listens: never crash on it.
  out.on('error', () => {});

  body.on('data', (chunk: Buffer) => {
    kept += chunk.length;
    if (!tooLarge && kept > maxStoredBytes) {
      tooLarge = true;
      chunks.length = 0;
    } else if (!tooLarge) chunks.push(chunk);
    if (!clientGone && !out.destroyed && !out.write(chunk)) body.pause();
  });
  out.on('drain', () => body.resume());
  raw.once('close', () => {
    if (raw.writableFinished) return;
    // The client left: keep reading the upstream to its end for the stored copy.
    clientGone = true;
    body.resume();
  });
  body.once('end', () => {
    void (async () => {
      if (tooLarge && clientGone) {
        const terms = await paid.fail('too_large');
        onSettled?.({ delivered: false, terms });
      } else {
        const stored: StoredResponse = tooLarge
          ? { status, headers: { ...flattenHeaders(headers), [NOT_RETAINED]: '1' }, body: new Uint8Array() }
          : { status, headers: flattenHeaders(headers), body: Buffer.concat(chunks) };
        // Stored before the last byte goes out: a retry the moment the client has it replays.
        await paid.deliver(stored);
        onSettled?.({ delivered: true });
      }
      out.end();
    })();
  });
  let broke = false;
  body.on('error', (err) => {
    if (broke) return;
    broke = true;
    void (async () => {
      const terms = await paid.fail(classifyUpstreamError(err).detail);
      onSettled?.({ delivered: false, terms });
      out.destroy(err);
    })();
  });

  body.resume();
  if (clientGone) {
    // Nothing to send to: Fastify must not pipe into a closed socket (it reports that as an error).
    reply.hijack();
    return reply;
  }
  reply.code(status).headers(headers).headers(paid.receiptHeaders);
  return reply.send(out);
}
