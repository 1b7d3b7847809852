/**
 * Streams an upstream response to the client while keeping a copy (up to a cap)
 * for replays, and settles the redemption: delivered once the client got the whole
 * body; given back for a retry if the upstream or the client cut the stream.
 */
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../errors.ts';
import type { PaidLease } from '../payments/gate.ts';
import { keepLeaseAlive, NOT_RETAINED } from '../payments/respond.ts';
import { readCapped } from '../proxy/forward.ts';
import { classifyUpstreamError } from '../proxy/upstream-error.ts';
import type { StoredResponse } from '../store/store.ts';

export function flattenHeaders(headers: Record<string, string | string[]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

export function streamAndSettle(
  reply: FastifyReply,
  status: number,
  headers: Record<string, string | string[]>,
  body: Readable,
  lease: PaidLease | null,
  maxStoredBytes: number,
  onSettled?: (delivered: boolean) => void,
): FastifyReply | Promise<FastifyReply> {
  const declared = Number(flattenHeaders(headers)['content-length'] ?? Number.NaN);
  if (!lease) {
    // A small body of known length goes out in one write (headers + body) instead of a
    // piped stream (headers, then data): most API answers are like that.
    if (Number.isFinite(declared) && declared <= SMALL_BODY_BYTES)
      return sendSmall(reply, status, headers, body);
    reply.code(status).headers(headers);
    return reply.send(body);
  }
  if (Number.isFinite(declared) && declared <= Math.min(maxStoredBytes, BUFFER_FIRST_BYTES)) {
    return bufferCompleteSend(reply, status, headers, body, lease, maxStoredBytes, onSettled);
  }
  return streamThrough(reply, status, headers, body, lease, maxStoredBytes, onSettled);
}

const SMALL_BODY_BYTES = 64 * 1024;
/** Paid answers up to this size are stored before they are sent; larger ones stream. */
const BUFFER_FIRST_BYTES = 1024 * 1024;

/**
 * Reads a body of declared size whole; an upstream that fails or sends more than it
 * declared becomes an ApiError (retryable when a payment is waiting on it).
 */
async function readWhole(body: Readable, maxBytes: number, retryable: boolean): Promise<Buffer> {
  let bytes: Buffer | 'too_large';
  try {
    bytes = await readCapped(body, maxBytes);
  } catch (err) {
    const { error, detail } = classifyUpstreamError(err);
    throw new ApiError(
      error === 'upstream_timeout' ? 'upstream_timeout' : 'upstream_error',
      `the upstream failed while sending its answer${retryable ? '; retry with the same X-PAYMENT' : ''}`,
      { ...(retryable ? { retryable } : {}), reason: detail },
    );
  }
  if (bytes === 'too_large') {
    throw new ApiError('upstream_error', 'the upstream sent more than it declared', {
      ...(retryable ? { retryable } : {}),
      reason: 'length_mismatch',
    });
  }
  return bytes;
}

async function sendSmall(
  reply: FastifyReply,
  status: number,
  headers: Record<string, string | string[]>,
  body: Readable,
): Promise<FastifyReply> {
  const bytes = await readWhole(body, SMALL_BODY_BYTES, false);
  reply.code(status).headers(headers);
  return reply.send(bytes);
}

/**
 * A body of known, storable size is read whole, stored as delivered, then sent: a
 * retry that arrives the moment the client has the bytes finds it delivered, and a
 * client that loses the connection gets the same bytes by sending the proof again.
 */
async function bufferCompleteSend(
  reply: FastifyReply,
  status: number,
  headers: Record<string, string | string[]>,
  body: Readable,
  lease: PaidLease,
  maxStoredBytes: number,
  onSettled?: (delivered: boolean) => void,
): Promise<FastifyReply> {
  let bytes: Buffer;
  try {
    bytes = await readWhole(body, maxStoredBytes, true);
  } catch (err) {
    await lease.release();
    onSettled?.(false);
    throw err;
  }
  await lease.complete({ status, headers: flattenHeaders(headers), body: bytes });
  onSettled?.(true);
  reply.code(status).headers(headers).header('x-payment-response', lease.receiptHeader);
  return reply.send(bytes);
}

/**
 * A body of unknown or large size is streamed while a copy (up to the cap) is kept;
 * it counts as delivered when the upstream finished and the client was still there,
 * and is given back for a retry if either side cut the stream.
 */
function streamThrough(
  reply: FastifyReply,
  status: number,
  headers: Record<string, string | string[]>,
  body: Readable,
  lease: PaidLease,
  maxStoredBytes: number,
  onSettled?: (delivered: boolean) => void,
): FastifyReply {
  const chunks: Buffer[] = [];
  let kept = 0;
  let tooLarge = false;
  const tap = new PassThrough();
  body.on('data', (chunk: Buffer) => {
    if (tooLarge) return;
    kept += chunk.length;
    if (kept > maxStoredBytes) {
      tooLarge = true;
      chunks.length = 0;
    } else chunks.push(chunk);
  });
  body.on('error', (err) => tap.destroy(err));
  body.pipe(tap);

  const stopRenewing = keepLeaseAlive(lease, lease.leaseMs);
  let settled = false;
  const settle = async (delivered: boolean) => {
    if (settled) return;
    settled = true;
    stopRenewing();
    if (delivered) {
      const stored: StoredResponse = tooLarge
        ? { status, headers: { ...flattenHeaders(headers), [NOT_RETAINED]: '1' }, body: new Uint8Array() }
        : { status, headers: flattenHeaders(headers), body: Buffer.concat(chunks) };
      await lease.complete(stored);
    } else {
      body.destroy();
      await lease.release();
    }
    onSettled?.(delivered);
  };
  body.once('end', () => {
    if (!reply.raw.destroyed) void settle(true).catch(() => {});
  });
  reply.raw.once('close', () => void settle(reply.raw.writableFinished).catch(() => {}));

  reply.code(status).headers(headers).header('x-payment-response', lease.receiptHeader);
  return reply.send(tap);
}
