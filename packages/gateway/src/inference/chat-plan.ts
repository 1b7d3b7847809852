/**
 * Turning a validated chat request into what is priced and what is sent upstream:
 * prompt tokens counted here, the output cap clamped to the model, and the upstream
 * body carrying exactly that cap, so the real cost can never exceed the quote.
 */
import { ApiError } from '../errors.ts';
import type { ModelEntry } from './catalogue.ts';
import { type ChatMessage, type ChatRequest, partText } from './chat-request.ts';
import { affordableOutputTokens, tokenPrice } from './pricing.ts';
import type { Tokenizer } from './tokenizer.ts';

/** OpenAI's documented chat framing: 3 tokens per message, 1 per name, 3 to prime the reply. */
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_NAME = 1;
const REPLY_PRIMING = 3;
/** Upstreams join content parts with a separator (vLLM: a newline): one token per part. */
const TOKENS_PER_PART = 1;
/**
 * OpenAI renders tool definitions into the prompt; its cookbook counts 7 tokens per
 * function and 12 to close the block on top of the names, descriptions and parameters.
 * Those texts are counted here as the definitions' JSON, which is longer.
 */
const TOKENS_PER_TOOL = 7;
const TOOLS_FRAMING = 12;

/** Request fields besides `messages` that reach the model's context. */
export type PromptExtras = Pick<ChatRequest, 'tools' | 'tool_choice' | 'response_format' | 'stop'>;

/**
 * Prompt tokens of a chat: everything the upstream may tokenize (DESIGN §4.10). A field
 * forwarded but not counted here would be input the payer gets for free, so each new
 * request or message field must be counted or refused by the schema.
 */
export function countChatPrompt(
  tok: Tokenizer,
  messages: readonly ChatMessage[],
  extras: PromptExtras = {},
): number {
  let n = REPLY_PRIMING;
  for (const m of messages) n += countMessage(tok, m);
  return n + countTools(tok, extras.tools) + countExtras(tok, extras);
}

function countMessage(tok: Tokenizer, m: ChatMessage): number {
  let n = TOKENS_PER_MESSAGE + tok.count(m.role) + countContent(tok, m.content);
  if ('name' in m && m.name) n += TOKENS_PER_NAME + tok.count(m.name);
  if (m.role === 'assistant') {
    if (m.refusal) n += tok.count(m.refusal);
    if (m.tool_calls) n += tok.count(JSON.stringify(m.tool_calls));
  }
  if (m.role === 'tool') n += tok.count(m.tool_call_id);
  return n;
}

/** Parts are counted one by one: never less than their joined text, whatever the separator. */
function countContent(tok: Tokenizer, c: ChatMessage['content']): number {
  if (c === null || c === undefined) return 0;
  if (typeof c === 'string') return tok.count(c);
  return c.reduce((n, p) => n + TOKENS_PER_PART + tok.count(partText(p)), 0);
}

function countTools(tok: Tokenizer, tools: PromptExtras['tools']): number {
  if (!tools || tools.length === 0) return 0;
  return TOOLS_FRAMING + tools.length * TOKENS_PER_TOOL + tok.count(JSON.stringify(tools));
}

/**
 * `tool_choice` and `response_format` (a json_schema) may be rendered into the prompt;
 * their JSON is a safe upper bound. Stop sequences are not prompt text at OpenAI, but
 * other servers tokenize them to match output, and four short strings cost little:
 * counted, to stay on the safe side.
 */
function countExtras(tok: Tokenizer, e: PromptExtras): number {
  let n = 0;
  if (e.tool_choice !== undefined) n += tok.count(JSON.stringify(e.tool_choice));
  if (e.response_format) n += tok.count(JSON.stringify(e.response_format));
  if (e.stop) n += [e.stop].flat().reduce((s, seq) => s + tok.count(seq), 0);
  return n;
}

export interface ChatPlan {
  promptTokens: number;
  /** Output cap per choice, after clamping. */
  maxTokens: number;
  choices: number;
  /** Worst-case inference price in atomic USDC (before the platform fee). */
  price: bigint;
}

/**
 * Clamps the requested output cap: requested (max_completion_tokens, max_tokens, or
 * the model's default) ≤ the model's maxOutputTokens ≤ contextLength − prompt.
 */
export function planChat(model: ModelEntry, req: ChatRequest, promptTokens: number): ChatPlan {
  const room = model.contextLength - promptTokens;
  if (room < 1) {
    throw new ApiError(
      'invalid_request',
      `the prompt has ${promptTokens} tokens; ${model.id} accepts at most ${model.contextLength - 1}`,
      {
        param: 'messages',
        reason: 'context_length_exceeded',
      },
    );
  }
  const asked = [req.max_completion_tokens, req.max_tokens].filter((v): v is number => typeof v === 'number');
  const requested = asked.length ? Math.min(...asked) : model.defaultMaxTokens;
  const maxTokens = Math.min(requested, model.maxOutputTokens, room);
  const choices = req.n ?? 1;
  return { promptTokens, maxTokens, choices, price: tokenPrice(model, promptTokens, maxTokens * choices) };
}

/**
 * The output cap a paid price still covers. Normally the plan's own cap; smaller only
 * when the prompt grew after the quote (a conversation turn whose history changed)
 * or the operator raised prices since. Returns 0 when the price no longer covers one token.
 */
export function capForBudget(model: ModelEntry, plan: ChatPlan, paid: bigint): number {
  const perChoice = affordableOutputTokens(model, paid, plan.promptTokens) / plan.choices;
  if (perChoice < 1) return 0;
  return Math.min(plan.maxTokens, Math.floor(perChoice));
}

/** The body sent upstream: the caller's request with the upstream model name and the clamped cap. */
export function upstreamChatBody(
  model: ModelEntry,
  req: ChatRequest,
  maxTokens: number,
): Record<string, unknown> {
  const { max_tokens: _a, max_completion_tokens: _b, stream_options: _c, ...rest } = req;
  const param = model.upstream.type === 'openai' ? model.upstream.maxTokensParam : 'max_tokens';
  const upstreamModel = model.upstream.type === 'openai' ? (model.upstream.model ?? model.id) : model.id;
  const body: Record<string, unknown> = { ...rest, model: upstreamModel, [param]: maxTokens };
  if (req.stream) body.stream_options = { include_usage: true };
  return body;
}
