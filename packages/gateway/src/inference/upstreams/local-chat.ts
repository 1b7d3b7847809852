/**
 * `tollgate-dev-chat`: the local development chat model for sandbox mode. It is a
 * stand-in, NOT a language model: it answers with deterministic text derived from the
 * prompt, so the whole paid chat path (quotes, max_tokens, streaming, usage,
 * conversations) can run offline. It counts tokens with the same tokenizer as the
 * gateway and never produces more than the max_tokens it is sent.
 */
import { createHash, randomBytes } from 'node:crypto';
import { countChatPrompt } from '../chat-plan.ts';
import { type ChatMessage, type ChatRequest, contentText } from '../chat-request.ts';
import type { Tokenizer } from '../tokenizer.ts';
import type { ChatUpstream, Json } from './upstream.ts';

export const DEV_CHAT_MODEL = 'tollgate-dev-chat';

interface Reply {
  content: string;
  completionTokens: number;
  finishReason: 'stop' | 'length';
}

/** The deterministic answer to a chat, truncated to `maxTokens` tokens. */
export function devChatReply(
  tok: Tokenizer,
  messages: readonly ChatMessage[],
  maxTokens: number,
  choice = 0,
): Reply {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const said = contentText(lastUser?.content).replace(/\s+/g, ' ').trim();
  const fingerprint = createHash('sha256')
    .update(JSON.stringify([messages, choice]))
    .digest('hex')
    .slice(0, 12);
  const words = said ? said.split(' ').length : 0;
  const echo = said.length > 400 ? `${said.slice(0, 400)}…` : said;
  const text =
    `This is ${DEV_CHAT_MODEL}, a local development stand-in, not a language model. ` +
    `I read ${messages.length} message${messages.length === 1 ? '' : 's'}; your last one had ${words} word${words === 1 ? '' : 's'}` +
    (echo ? `: "${echo}"` : '') +
    `. Prompt fingerprint ${fingerprint}.`;
  const tokens = tok.encode(text);
  if (tokens.length <= maxTokens)
    return { content: text, completionTokens: tokens.length, finishReason: 'stop' };
  return {
    content: tok.decode(tokens.slice(0, maxTokens)),
    completionTokens: maxTokens,
    finishReason: 'length',
  };
}

/** Splits text into word-sized deltas for streaming (whitespace stays with the word before it). */
function deltas(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

export function createLocalChat(publicId: string, tok: Tokenizer): ChatUpstream {
  function answer(body: Json) {
    const req = body as unknown as ChatRequest;
    const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : 16;
    const n = req.n ?? 1;
    const replies = Array.from({ length: n }, (_, i) => devChatReply(tok, req.messages, maxTokens, i));
    const promptTokens = countChatPrompt(tok, req.messages, req);
    const completionTokens = replies.reduce((s, r) => s + r.completionTokens, 0);
    return {
      id: `chatcmpl-dev-${randomBytes(9).toString('base64url')}`,
      created: Math.floor(Date.now() / 1000),
      replies,
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
    };
  }

  return {
    async complete(body) {
      const a = answer(body);
      return {
        ok: true,
        value: {
          id: a.id,
          object: 'chat.completion',
          created: a.created,
          model: publicId,
          choices: a.replies.map((r, index) => ({
            index,
            message: { role: 'assistant', content: r.content, refusal: null },
            logprobs: null,
            finish_reason: r.finishReason,
          })),
          usage: a.usage,
          system_fingerprint: 'tollgate-dev',
        },
      };
    },

    async stream(body, signal) {
      const a = answer(body);
      const base = {
        id: a.id,
        object: 'chat.completion.chunk',
        created: a.created,
        model: publicId,
        system_fingerprint: 'tollgate-dev',
      };
      async function* chunks(): AsyncGenerator<Json> {
        for (const [index, r] of a.replies.entries()) {
          yield {
            ...base,
            choices: [
              { index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
            ],
          };
          for (const piece of deltas(r.content)) {
            if (signal.aborted) return;
            await new Promise((res) => setImmediate(res));
            yield {
              ...base,
              choices: [{ index, delta: { content: piece }, logprobs: null, finish_reason: null }],
            };
          }
          yield { ...base, choices: [{ index, delta: {}, logprobs: null, finish_reason: r.finishReason }] };
        }
        yield { ...base, choices: [], usage: a.usage };
      }
      return { ok: true, value: chunks() };
    },
  };
}
