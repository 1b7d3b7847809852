/**
 * Delivering a paid inference call and settling its payment (DESIGN §4.5): a JSON
 * answer is stored for replay (lease.complete) before it is sent; an SSE stream is
 * stored and completed only once the upstream finished it with `[DONE]`. Anything
 * that fails before the answer is whole gives the payment back (lease.release) so
 * the same X-PAYMENT can be sent again.
 */
import type { FastifyReply } from 'fastify';
import { sendError } from '../errors.ts';
import type { PaidLease } from '../payments/gate.ts';
import { failedReceipt, keepLeaseAlive, NOT_RETAINED } from '../payments/respond.ts';
import type { StoredResponse } from '../store/store.ts';
import { sseEvent } from './upstreams/sse.ts';
import { type Json, UpstreamCut, type UpstreamFailure, type UpstreamRejected } from './upstreams/upstream.ts';

export { answerGateOutcome, keepLeaseAlive } from '../payments/respond.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

/** An upstream that failed before answering: give the payment back and say it is retryable. */
export async function sendUpstreamFailure(
  reply: FastifyReply,
  lease: PaidLease | null,
  f: UpstreamFailure,
): Promise<FastifyReply> {
  if (lease) await lease.release();
  const timeout = f.error === 'upstream_timeout';
  return sendError(
    reply,
    f.error,
    `${timeout ? 'the model did not answer in time' : 'the model upstream failed'}${lease ? '; retry with the same X-PAYMENT' : ''}`,
    {
      retryable: lease !== null,
      reason: f.reason,
      ...(f.status !== undefined ? { upstreamStatus: f.status } : {}),
    },
    lease ? { 'x-payment-response': failedReceipt(lease), 'retry-after': '1' } : {},
  );
}

/** Stores a JSON answer for replays (when paid), then sends it with the receipt. */
export async function sendPaidJson(
  reply: FastifyReply,
  lease: PaidLease | null,
  status: number,
  body: Json,
): Promise<FastifyReply> {
  const bytes = Buffer.from(JSON.stringify(body));
  const headers = { 'content-type': JSON_TYPE };
  if (lease) {
    const stored: StoredResponse = { status, headers, body: bytes };
    await lease.complete(stored);
    reply.header('x-payment-response', lease.receiptHeader);
  }
  return reply.code(status).headers(headers).send(bytes);
}

/** The upstream refused the request itself: that answer is what was paid for. */
export function sendRejected(
  reply: FastifyReply,
  lease: PaidLease | null,
  r: UpstreamRejected,
): Promise<FastifyReply> {
  return sendPaidJson(reply, lease, r.status, r.body);
}

/** Answers an upstream call that did not succeed: a refusal is delivered, a failure released. */
export function sendUpstreamProblem(
  reply: FastifyReply,
  lease: PaidLease | null,
  r: UpstreamFailure | UpstreamRejected,
): Promise<FastifyReply> {
  return r.kind === 'rejected' ? sendRejected(reply, lease, r) : sendUpstreamFailure(reply, lease, r);
}

export interface StreamSummary {
  /** Content of choice 0, concatenated. */
  content: string;
  /** The upstream's usage chunk, if it sent one. */
  usage: Json | null;
  finishReason: string | null;
}

export interface StreamOptions {
  reply: FastifyReply;
  lease: PaidLease | null;
  chunks: AsyncIterable<Json>;
  publicModel: string;
  maxStoredBytes: number;
  leaseMs: number;
  /** Aborts the upstream call; fired when the client goes away. */
  abort: AbortController;
  /** Usage to report when the upstream sent none (counted by the gateway). */
  usageFallback(summary: StreamSummary): Json;
  /**
   * Called when the upstream finished; its fields go out in one last chunk before
   * `[DONE]`. Resolving null (or failing) ends the stream with an error instead.
   */
  beforeDone?: (summary: StreamSummary) => Promise<Json | null>;
}

function trackChunk(chunk: Json, s: StreamSummary): void {
  if (chunk.usage && typeof chunk.usage === 'object') s.usage = chunk.usage as Json;
  const choices = Array.isArray(chunk.choices) ? (chunk.choices as Json[]) : [];
  for (const c of choices) {
    if (c.index !== undefined && c.index !== 0) continue;
    const delta = c.delta as { content?: unknown } | undefined;
    if (typeof delta?.content === 'string') s.content += delta.content;
    if (typeof c.finish_reason === 'string') s.finishReason = c.finish_reason;
  }
}

/**
 * Streams chat chunks as SSE. Waits for the first chunk before sending headers, so a
 * failure up to then is an ordinary retryable JSON error. A stream the upstream cuts
 * later ends with an `error` event (no `[DONE]`) and the payment is given back.
 */
export async function streamChat(o: StreamOptions): Promise<FastifyReply> {
  const { reply, lease } = o;
  const it = o.chunks[Symbol.asyncIterator]();
  const stopRenew = keepLeaseAlive(lease, o.leaseMs);
  let next: IteratorResult<Json>;
  try {
    next = await it.next();
  } catch (e) {
    stopRenew();
    return sendUpstreamFailure(reply, lease, {
      ok: false,
      kind: 'failed',
      error: 'upstream_error',
      reason: e instanceof UpstreamCut ? e.reason : 'stream_failed',
    });
  }

  const raw = reply.raw;
  reply.hijack();
  // Once hijacked, Fastify no longer ends the response: end it on every path, a throw included.
  try {
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      ...(lease ? { 'x-payment-response': lease.receiptHeader } : {}),
    });
    const kept: string[] = [];
    let keptBytes = 0;
    const write = async (text: string): Promise<boolean> => {
      keptBytes += Buffer.byteLength(text);
      if (keptBytes <= o.maxStoredBytes) kept.push(text);
      if (raw.destroyed) return false;
      if (!raw.write(text)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            raw.off('drain', done);
            raw.off('close', done);
            resolve();
          };
          raw.once('drain', done);
          raw.once('close', done);
        });
      }
      return !raw.destroyed;
    };

    const summary: StreamSummary = { content: '', usage: null, finishReason: null };
    let cut: string | null = null;
    let clientGone = false;
    try {
      while (!next.done) {
        const chunk = { ...next.value, model: o.publicModel };
        trackChunk(chunk, summary);
        if (!(await write(sseEvent(JSON.stringify(chunk))))) {
          clientGone = true;
          break;
        }
        next = await it.next();
      }
    } catch (e) {
      cut = e instanceof UpstreamCut ? e.reason : 'stream_failed';
    }
    stopRenew();

    if (clientGone) {
      o.abort.abort();
      await it.return?.().catch(() => undefined);
      if (lease) await lease.release();
      return reply;
    }
    const finalChunk = (fields: Json) =>
      sseEvent(
        JSON.stringify({
          id: 'final',
          object: 'chat.completion.chunk',
          created: Math.floor(Date.now() / 1000),
          model: o.publicModel,
          choices: [],
          ...fields,
        }),
      );
    if (cut === null && !summary.usage) {
      summary.usage = o.usageFallback(summary);
      await write(finalChunk({ usage: summary.usage }));
    }
    if (cut === null && o.beforeDone) {
      // Runs once the answer is whole and before [DONE]: a conversation stores its turn here.
      const extra = await o.beforeDone(summary).catch(() => null);
      if (extra === null) cut = 'not_stored';
      else await write(finalChunk(extra));
    }
    if (cut !== null) {
      const error = {
        message: `the model upstream cut the stream (${cut})${lease ? '; retry with the same X-PAYMENT' : ''}`,
        type: 'upstream_error',
        code: 'upstream_error',
        retryable: lease !== null,
      };
      await write(sseEvent(JSON.stringify({ error })));
      if (lease) await lease.release();
      return reply;
    }
    await write(sseEvent('[DONE]'));
    if (lease) {
      const headers: Record<string, string> = {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
      };
      const stored: StoredResponse =
        keptBytes > o.maxStoredBytes
          ? { status: 200, headers: { ...headers, [NOT_RETAINED]: '1' }, body: new Uint8Array() }
          : { status: 200, headers, body: Buffer.from(kept.join('')) };
      await lease.complete(stored);
    }
    return reply;
  } finally {
    if (!raw.writableEnded) raw.end();
  }
}
