/**
 * `POST /v1/conversations/:id/messages`: a paid chat turn. The quote counts the whole
 * stored history plus the new message. The user message and the reply are stored
 * once per payment: both items carry the redemption id, and a later attempt under the
 * same redemption (after a lost lease or a crash between storing and completing)
 * answers from the stored items instead of calling the model and appending again.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { sendError } from '../errors.ts';
import type { Conversation, ConversationItem } from '../store/store.ts';
import { capForBudget, countChatPrompt, planChat, upstreamChatBody } from './chat-plan.ts';
import type { ChatMessage, ChatRequest } from './chat-request.ts';
import { allItems, itemView, type TurnRequest } from './conversations.ts';
import {
  answerGateOutcome,
  keepLeaseAlive,
  sendPaidJson,
  sendRejected,
  sendUpstreamFailure,
} from './deliver.ts';
import { abortOnClientClose, choiceTexts, countedUsage, gate, modelFor } from './paid-call.ts';
import { inferenceQuote } from './quote.ts';
import type { Json } from './upstreams/upstream.ts';

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
  const plan = planChat(model, chat, countChatPrompt(tok, messages));
  const quote = inferenceQuote(
    {
      subject: `inf:conv:${conv.id}`,
      resource: `POST /v1/conversations/${conv.id}/messages`,
      description: `${model.id}: ${history.length} stored items + 1 message, ${plan.promptTokens} prompt tokens + up to ${plan.maxTokens} completion tokens`,
      price: plan.price,
      pricingSourceVersion: model.pricingSourceVersion,
    },
    deps.config,
    deps.verifiers,
  );
  const outcome = await gate(request, deps, quote);
  const answered = answerGateOutcome(reply, outcome);
  if (answered) return answered;
  const lease = outcome.kind === 'paid' ? outcome.lease : null;

  if (lease) {
    const stored = history.filter((i) => i.redemptionId === lease.redemption.id);
    if (stored.length > 0) return sendPaidJson(reply, lease, 200, turnResponse(conv, model.id, stored, null));
  }
  // The history may have grown since the quote; the price paid still bounds the cap.
  const maxTokens = lease ? capForBudget(model, plan, lease.claims.price) : plan.maxTokens;
  if (maxTokens < 1) {
    if (lease) await lease.release();
    return sendError(
      reply,
      'conflict',
      'the conversation grew since the quote; the price paid no longer covers it',
      {
        reason: 'history_changed',
      },
    );
  }

  const upstream = await deps.inference.chat(model);
  const abort = abortOnClientClose(reply);
  const stop = keepLeaseAlive(lease, deps.config.leaseMs);
  const r = await upstream
    .complete(upstreamChatBody(model, { ...chat, stream: false }, maxTokens), abort.signal)
    .finally(stop);
  if (!r.ok)
    return r.kind === 'rejected' ? sendRejected(reply, lease, r) : sendUpstreamFailure(reply, lease, r);
  const completion: Json = { ...r.value, model: model.id };
  const text = choiceTexts(completion)[0] ?? '';
  completion.usage ??= countedUsage(tok, plan.promptTokens, [text]);
  const redemptionId = lease?.redemption.id ?? null;
  let items: ConversationItem[];
  try {
    items = await deps.store.conversations.append(conv.id, [
      { role: 'user', content, redemptionId, usage: null },
      { role: 'assistant', content: text, redemptionId, usage: completion.usage as Record<string, unknown> },
    ]);
  } catch (err) {
    // The conversation was deleted while the model answered.
    request.log.warn({ err, conversation: conv.id }, 'conversation turn could not be stored');
    if (lease) await lease.release();
    return sendError(reply, 'not_found', 'the conversation no longer exists');
  }
  return sendPaidJson(reply, lease, 200, turnResponse(conv, model.id, items, completion));
}
