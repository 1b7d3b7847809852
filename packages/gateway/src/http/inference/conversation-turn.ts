/**
 * `POST /v1/conversations/:id/messages`: a paid chat turn. The quote counts the whole
 * stored history plus the new message. The user message and the reply are stored
 * once per payment: both items carry the redemption id, and a later attempt under the
 * same redemption (after a lost lease or a crash between storing and completing)
 * answers from the stored items instead of calling the model and appending again.
 * With `stream: true` the turn streams like a chat completion; its last chunk before
 * `[DONE]` carries `conversation_id` and the stored `items`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.ts';
import { capForBudget, countChatPrompt, planChat, upstreamChatBody } from '../../inference/chat-plan.ts';
import type { ChatMessage, ChatRequest } from '../../inference/chat-request.ts';
import { allItems, itemView, type TurnRequest } from '../../inference/conversations.ts';
import { sseEvent } from '../../inference/upstreams/sse.ts';
import { failed, type Json } from '../../inference/upstreams/upstream.ts';
import type { PaidRequest } from '../../payments/settle.ts';
import { type Conversation, type ConversationItem, UniqueViolationError } from '../../store/store.ts';
import { sendError } from '../error-handling.ts';
import { sendSettlementFailed } from '../respond.ts';
import { sendPaidJson, sendUpstreamFailure, sendUpstreamProblem, streamChat } from './deliver.ts';
import { abortOnClientClose, charge, choiceTexts, countedUsage, modelFor } from './paid-call.ts';

function turnResponse(conv: Conversation, model: string, items: ConversationItem[], completion: Json | null) {
  const reply = items.find((i) => i.role === 'assistant');
  return {
    id: (completion?.id as string | undefined) ?? `chatcmpl-${reply?.id ?? conv.id}`,
    object: 'chat.completion',
    created: (completion?.created as number | undefined) ?? Math.floor(Date.now() / 1000),
    model,
    choices: (completion?.choices as unknown[] | undefined) ?? [
      { index: 0, message: { role: 'assistant', content: reply?.content ?? '' }, finish_reason: 'stop' },
    ],
    usage: completion?.usage ?? reply?.usage ?? null,
    conversation_id: conv.id,
    items: items.map(itemView),
  };
}

export async function conversationTurn(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  conv: Conversation,
  turn: TurnRequest,
): Promise<FastifyReply> {
  const modelId = turn.model ?? conv.model;
  if (!modelId)
    return sendError(reply, 'invalid_request', 'name a model in the turn or on the conversation', {
      param: 'model',
    });
  const model = modelFor(deps, modelId, 'chat');
  const history = await allItems(deps.store.conversations, conv.id);
  const { content, model: _m, ...params } = turn;
  const messages: ChatMessage[] = [
    ...history.map((i) => ({ role: i.role, content: i.content })),
    { role: 'user', content },
  ];
  const chat: ChatRequest = { ...params, model: model.id, messages };
  const tok = await deps.inference.tokenizer(model);
  const plan = planChat(model, chat, countChatPrompt(tok, messages, chat));
  return charge(
    request,
    reply,
    deps,
    {
      subject: `inf:conv:${conv.id}`,
      resource: `POST /v1/conversations/${conv.id}/messages`,
      description: `${model.id}: ${history.length} stored items + 1 message, ${plan.promptTokens} prompt tokens + up to ${plan.maxTokens} completion tokens`,
      price: plan.price,
      pricingSourceVersion: model.pricingSourceVersion,
    },
    async (paid) => {
      const stream = turn.stream === true;
      const redemptionId = paid?.redemptionId ?? null;
      if (paid) {
        const stored = history.filter((i) => i.redemptionId === redemptionId);
        if (stored.length > 0) {
          return stream
            ? sendStoredTurnStream(reply, paid, conv, model.id, stored)
            : sendPaidJson(reply, paid, 200, turnResponse(conv, model.id, stored, null));
        }
      }
      // The history may have grown since the quote; the price paid still bounds the cap.
      const maxTokens = paid ? capForBudget(model, plan, paid.claims.price) : plan.maxTokens;
      if (maxTokens < 1) {
        await paid?.abandon('history_changed');
        return sendError(
          reply,
          'conflict',
          'the conversation grew since the quote; the price paid no longer covers it',
          {
            reason: 'history_changed',
          },
        );
      }

      /** Appends the turn; null when the conversation was deleted while the model answered. */
      const storeTurn = async (text: string, usage: Json): Promise<ConversationItem[] | null> => {
        try {
          return await deps.store.conversations.append(conv.id, [
            { role: 'user', content, redemptionId, usage: null },
            { role: 'assistant', content: text, redemptionId, usage },
          ]);
        } catch (err) {
          // Another holder of this payment already stored the turn: answer with what it stored.
          if (err instanceof UniqueViolationError && redemptionId) {
            const stored = (await allItems(deps.store.conversations, conv.id)).filter(
              (i) => i.redemptionId === redemptionId,
            );
            if (stored.length > 0) return stored;
          }
          request.log.warn({ err, conversation: conv.id }, 'conversation turn could not be stored');
          return null;
        }
      };

      const upstream = await deps.inference.chat(model);
      const body = upstreamChatBody(model, { ...chat, stream }, maxTokens);
      const abort = abortOnClientClose(reply, paid);
      if (stream) {
        const r = await upstream.stream(body, abort.signal);
        if (!r.ok) return sendUpstreamProblem(reply, paid, r);
        return streamChat({
          reply,
          paid,
          chunks: r.value,
          publicModel: model.id,
          maxStoredBytes: deps.config.maxResponseBytes,
          abort,
          usageFallback: (sum) => countedUsage(tok, plan.promptTokens, [sum.content]),
          beforeDone: async (sum) => {
            const items = await storeTurn(sum.content, sum.usage ?? {});
            return items ? { conversation_id: conv.id, items: items.map(itemView) } : null;
          },
        });
      }

      const r = await upstream.complete(body, abort.signal);
      if (!r.ok) return sendUpstreamProblem(reply, paid, r);
      if (!Array.isArray(r.value.choices))
        return sendUpstreamFailure(reply, paid, failed('upstream_error', 'bad_response'));
      const completion: Json = { ...r.value, model: model.id };
      const text = choiceTexts(completion)[0] ?? '';
      completion.usage ??= countedUsage(tok, plan.promptTokens, [text]);
      // A v2 payment lands before the turn is stored: an unpaid turn is never kept.
      if (paid && !(await paid.commit())) return sendSettlementFailed(reply, paid);
      const items = await storeTurn(text, completion.usage as Json);
      if (!items) {
        await paid?.abandon('conversation_gone');
        return sendError(reply, 'not_found', 'the conversation no longer exists');
      }
      return sendPaidJson(reply, paid, 200, turnResponse(conv, model.id, items, completion));
    },
  );
}

/** A turn stored by an earlier attempt under this payment, sent again as a stream. */
async function sendStoredTurnStream(
  reply: FastifyReply,
  paid: PaidRequest,
  conv: Conversation,
  model: string,
  items: ConversationItem[],
): Promise<FastifyReply> {
  const answer = items.find((i) => i.role === 'assistant');
  const base = {
    id: `chatcmpl-${answer?.id ?? conv.id}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
  };
  const events = [
    {
      ...base,
      choices: [
        { index: 0, delta: { role: 'assistant', content: answer?.content ?? '' }, finish_reason: null },
      ],
    },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    {
      ...base,
      choices: [],
      usage: answer?.usage ?? null,
      conversation_id: conv.id,
      items: items.map(itemView),
    },
  ];
  const text = events.map((e) => sseEvent(JSON.stringify(e))).join('') + sseEvent('[DONE]');
  const headers = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };
  if (!(await paid.commit())) return sendSettlementFailed(reply, paid);
  await paid.deliver({ status: 200, headers, body: Buffer.from(text) });
  return reply.code(200).headers(headers).headers(paid.receiptHeaders).send(text);
}
