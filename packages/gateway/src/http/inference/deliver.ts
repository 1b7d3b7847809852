/**
 * Delivering a paid inference call and settling its payment (DESIGN §4.5): a JSON
 * answer is stored for replay (paid.deliver) before it is sent; an SSE stream is
 * stored and delivered once the upstream finished it with `[DONE]`, and is read to
 * that end even when the client left. Only an upstream that fails before the answer is
 * whole gives the payment back (paid.fail), so the same X-PAYMENT can be sent again.
 */
import type { FastifyReply } from 'fastify';
import { sseEvent } from '../../inference/upstreams/sse.ts';
import {
  type Json,
  UpstreamCut,
  type UpstreamFailure,
  type UpstreamRejected,
} from '../../inference/upstreams/upstream.ts';
import type { PaidRequest } from '../../payments/settle.ts';
import type { StoredResponse } from '../../store/store.ts';
import { sendError } from '../error-handling.ts';
import { NOT_RETAINED, sendRetryable, sendSettlementFailed } from '../respond.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

/** An upstream that failed before answering: give the payment back and say it is retryable. */
export async function sendUpstreamFailure(
  reply: FastifyReply,
  paid: PaidRequest | null,
  f: UpstreamFailure,
): Promise<FastifyReply> {
  const message =
    f.error === 'upstream_timeout' ? 'the model did not answer in time' : 'the model upstream failed';
  const extra = { reason: f.reason, ...(f.status !== undefined ? { upstreamStatus: f.status } : {}) };
  if (!paid) return sendError(reply, f.error, message, { ...extra, retryable: false });
  return sendRetryable(reply, f.error, message, await paid.fail(f.reason), extra);
}

/** Stores a JSON answer for replays (when paid), then sends it with the receipt. */
export async function sendPaidJson(
  reply: FastifyReply,
  paid: PaidRequest | null,
  status: number,
  body: Json,
): Promise<FastifyReply> {
  const bytes = Buffer.from(JSON.stringify(body));
  const headers = { 'content-type': JSON_TYPE };
  if (paid) {
    if (!(await paid.commit())) return sendSettlementFailed(reply, paid);
    await paid.deliver({ status, headers, body: bytes });
    reply.headers(paid.receiptHeaders);
  }
  return reply.code(status).headers(headers).send(bytes);
}

/** The upstream refused the request itself: that answer is what was paid for. */
export function sendRejected(
  reply: FastifyReply,
  paid: PaidRequest | null,
  r: UpstreamRejected,
): Promise<FastifyReply> {
  return sendPaidJson(reply, paid, r.status, r.body);
}

/** Answers an upstream call that did not succeed: a refusal is delivered, a failure released. */
export function sendUpstreamProblem(
  reply: FastifyReply,
  paid: PaidRequest | null,
  r: UpstreamFailure | UpstreamRejected,
): Promise<FastifyReply> {
  return r.kind === 'rejected' ? sendRejected(reply, paid, r) : sendUpstreamFailure(reply, paid, r);
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
  paid: PaidRequest | null;
  chunks: AsyncIterable<Json>;
  publicModel: string;
  maxStoredBytes: number;
  /** Aborts the upstream call of an unpaid stream whose client went away. */
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
 * later ends with an `error` event (no `[DONE]`) and the payment is given back. A paid
 * stream whose client left is still read to its end, stored and delivered, so the
 * same proof replays it and never buys a second generation.
 */
export async function streamChat(o: StreamOptions): Promise<FastifyReply> {
  const { reply, paid } = o;
  const it = o.chunks[Symbol.asyncIterator]();
  let next: IteratorResult<Json>;
  try {
    next = await it.next();
  } catch (e) {
    return sendUpstreamFailure(reply, paid, {
      ok: false,
      kind: 'failed',
      error: 'upstream_error',
      reason: e instanceof UpstreamCut ? e.reason : 'stream_failed',
    });
  }

  // A v2 payment is sent once the upstream is streaming, before the first byte goes out.
  if (paid && !(await paid.commit())) {
    o.abort.abort();
    await it.return?.().catch(() => undefined);
    return sendSettlementFailed(reply, paid);
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
      ...(paid ? paid.receiptHeaders : {}),
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
        // write() keeps a copy even once the client is gone: a paid stream goes on for it.
        if (!(await write(sseEvent(JSON.stringify(chunk))))) {
          clientGone = true;
          if (!paid) break;
        }
        next = await it.next();
      }
    } catch (e) {
      cut = e instanceof UpstreamCut ? e.reason : 'stream_failed';
    }

    if (clientGone && !paid) {
      o.abort.abort();
      await it.return?.().catch(() => undefined);
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
    let notStored = false;
    if (cut === null && o.beforeDone) {
      // Runs once the answer is whole and before [DONE]: a conversation stores its turn here.
      const extra = await o.beforeDone(summary).catch(() => null);
      if (extra === null) notStored = true;
      else await write(finalChunk(extra));
    }
    if (cut !== null || notStored) {
      const error = {
        message: `${cut !== null ? `the model upstream cut the stream (${cut})` : 'the answer could not be stored'}${paid ? '; retry with the same X-PAYMENT' : ''}`,
        type: 'upstream_error',
        code: 'upstream_error',
        retryable: paid !== null,
      };
      await write(sseEvent(JSON.stringify({ error })));
      if (paid && cut !== null) await paid.fail(cut);
      else if (paid) await paid.abandon('not_stored');
      return reply;
    }
    const done = sseEvent('[DONE]');
    if (paid) {
      // Stored before the last event goes out: a retry the moment the client has it replays.
      const headers: Record<string, string> = {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
      };
      const stored: StoredResponse =
        keptBytes + done.length > o.maxStoredBytes
          ? { status: 200, headers: { ...headers, [NOT_RETAINED]: '1' }, body: new Uint8Array() }
          : { status: 200, headers, body: Buffer.from(kept.join('') + done) };
      await paid.deliver(stored);
    }
    if (!raw.destroyed) raw.write(done);
    return reply;
  } finally {
    if (!raw.writableEnded) raw.end();
  }
}
