/**
 * Streams an upstream response to the client while keeping a copy (up to a cap)
 * for replays, and settles the redemption: delivered once the client got the whole
 * body; given back for a retry if the upstream or the client cut the stream.
 */
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { PaidLease } from '../payments/gate.ts';
import type { StoredResponse } from '../store/store.ts';

/** Marks a stored response whose body was too large to keep for replays. */
export const NOT_RETAINED = 'x-tollgate-not-retained';

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
): FastifyReply {
  if (!lease) {
    reply.code(status).headers(headers);
    return reply.send(body);
  }
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

  const renew = setInterval(() => void lease.renew(), 10_000);
  renew.unref();
  let settled = false;
  const settle = async (delivered: boolean) => {
    if (settled) return;
    settled = true;
    clearInterval(renew);
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
  reply.raw.once('finish', () => void settle(true).catch(() => {}));
  reply.raw.once('close', () => void settle(reply.raw.writableFinished).catch(() => {}));

  reply.code(status).headers(headers).header('x-payment-response', lease.receiptHeader);
  return reply.send(tap);
}
