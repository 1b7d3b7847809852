/**
 * The steps every paid inference route shares: hash the raw body, run the payment
 * gate with the route's quote, and run a chat call (JSON or SSE) to its end.
 */
import { EMPTY_BODY_SHA256, sha256Hex } from '@tollgate/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.ts';
import { ApiError } from '../../errors.ts';
import type { ModelEntry } from '../../inference/catalogue.ts';
import { type InferenceQuoteInput, inferenceQuote } from '../../inference/quote.ts';
import type { Tokenizer } from '../../inference/tokenizer.ts';
import { type ChatUpstream, failed, type Json } from '../../inference/upstreams/upstream.ts';
import { bazaarExtensions } from '../../payments/bazaar.ts';
import type { Quote } from '../../payments/requirement.ts';
import type { Admission, PaidRequest } from '../../payments/settle.ts';
import { accessLogFor } from '../access-log.ts';
import { answerAdmission } from '../respond.ts';
import { sendPaidJson, sendUpstreamFailure, sendUpstreamProblem, streamChat } from './deliver.ts';

/** The body as received (the route scope parses every content type as raw bytes). */
export function rawBody(request: FastifyRequest): Buffer | null {
  return Buffer.isBuffer(request.body) && request.body.length > 0 ? request.body : null;
}

/**
 * Prices a paid inference call and runs it through settlement. Either settlement
 * answers (402, error, replay), or `serve` serves the call with `paid` (null when
 * nothing had to be paid). Whatever `serve` throws before the payment settled gives
 * it back at once, so the same X-PAYMENT can be sent again.
 */
export async function charge(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  input: InferenceQuoteInput,
  serve: (paid: PaidRequest | null) => Promise<FastifyReply>,
): Promise<FastifyReply> {
  const admission = await admit(request, deps, inferenceQuote(input, deps.config, deps.verifiers));
  const answered = answerAdmission(reply, admission);
  if (answered) return answered;
  const paid = admission.kind === 'paid' ? admission.paid : null;
  return deps.settlement.serve(paid, () => serve(paid));
}

export async function admit(request: FastifyRequest, deps: Deps, quote: Quote): Promise<Admission> {
  const raw = rawBody(request);
  const header = request.headers['x-payment'];
  const v2Header = request.headers['payment-signature'];
  return deps.settlement.admit({
    log: accessLogFor(request),
    header: Array.isArray(header) ? header[0] : header,
    v2Header: Array.isArray(v2Header) ? v2Header[0] : v2Header,
    facts: {
      method: request.method,
      pathWithQuery: request.url,
      bodySha256: raw ? sha256Hex(raw) : EMPTY_BODY_SHA256,
    },
    subject: quote.subject,
    v2Extensions: () => {
      // `inf:<route>:<model>`: a model id may itself contain ':'.
      const [, route = ''] = quote.subject.split(':', 2);
      const model = quote.subject.slice(`inf:${route}:`.length);
      return route === 'chat' || route === 'embeddings'
        ? bazaarExtensions({ inference: route, ...(model ? { model } : {}) })
        : undefined;
    },
    quote: () =>
      quote.options.length === 0 && quote.price + quote.fee > 0n
        ? {
            code: 'endpoint_unavailable',
            message: 'no chain can take payments right now',
            extra: { reason: 'no_payment_rail' },
            headers: { 'retry-after': '30' },
          }
        : quote,
    servePaid: () => null,
  });
}

/** The catalogue entry for a request's model, or a 404 `model_not_found` / 400 for the wrong kind. */
export function modelFor(deps: Deps, id: string, kind: ModelEntry['kind']): ModelEntry {
  const model = deps.inference.catalogue.get(id);
  if (!model)
    throw new ApiError('model_not_found', `the model ${JSON.stringify(id.slice(0, 256))} does not exist`, {
      param: 'model',
    });
  if (model.kind !== kind)
    throw new ApiError('invalid_request', `${id} is an ${model.kind} model`, { param: 'model' });
  return model;
}

/**
 * An AbortController fired when the client goes away before the response is complete,
 * for unpaid calls only: a paid call runs to its end and is stored whatever the client does.
 */
export function abortOnClientClose(reply: FastifyReply, paid: PaidRequest | null): AbortController {
  const abort = new AbortController();
  if (!paid) {
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
  }
  return abort;
}

/** Usage counted by the gateway, for upstreams that report none. */
export function countedUsage(tok: Tokenizer, promptTokens: number, completionTexts: readonly string[]): Json {
  const completion = completionTexts.reduce((s, t) => s + tok.count(t), 0);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
  };
}

export function choiceTexts(completion: Json): string[] {
  const choices = Array.isArray(completion.choices) ? (completion.choices as Json[]) : [];
  return choices.map((c) => {
    const content = (c.message as { content?: unknown } | undefined)?.content;
    return typeof content === 'string' ? content : '';
  });
}

export interface ChatCall {
  reply: FastifyReply;
  deps: Deps;
  paid: PaidRequest | null;
  model: ModelEntry;
  upstream: ChatUpstream;
  body: Json;
  stream: boolean;
  tok: Tokenizer;
  promptTokens: number;
}

/** Calls the chat upstream and delivers the answer, settling the payment either way. */
export async function runChat(c: ChatCall): Promise<FastifyReply> {
  const abort = abortOnClientClose(c.reply, c.paid);
  if (c.stream) {
    const r = await c.upstream.stream(c.body, abort.signal);
    if (!r.ok) return sendUpstreamProblem(c.reply, c.paid, r);
    return streamChat({
      reply: c.reply,
      paid: c.paid,
      chunks: r.value,
      publicModel: c.model.id,
      maxStoredBytes: c.deps.config.maxResponseBytes,
      abort,
      usageFallback: (s) => countedUsage(c.tok, c.promptTokens, [s.content]),
    });
  }
  const r = await c.upstream.complete(c.body, abort.signal);
  if (!r.ok) return sendUpstreamProblem(c.reply, c.paid, r);
  if (!Array.isArray(r.value.choices)) {
    return sendUpstreamFailure(c.reply, c.paid, failed('upstream_error', 'bad_response'));
  }
  const completion: Json = { ...r.value, model: c.model.id };
  if (!completion.usage) completion.usage = countedUsage(c.tok, c.promptTokens, choiceTexts(completion));
  return sendPaidJson(c.reply, c.paid, 200, completion);
}
