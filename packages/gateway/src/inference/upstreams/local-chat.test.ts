import { beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, type Tokenizer } from '../tokenizer.ts';
import { createLocalChat, devChatReply } from './local-chat.ts';
import type { Json } from './upstream.ts';

let tok: Tokenizer;
beforeAll(async () => {
  tok = await loadTokenizer('o200k_base');
});
const messages = [{ role: 'user' as const, content: 'Tell me about Oslo' }];

describe('tollgate-dev-chat', () => {
  it('answers deterministically from the prompt and says what it is', () => {
    const a = devChatReply(tok, messages, 1000);
    expect(a).toEqual(devChatReply(tok, messages, 1000));
    expect(a.content).toContain('not a language model');
    expect(a.content).toContain('Tell me about Oslo');
    expect(a.finishReason).toBe('stop');
    expect(devChatReply(tok, [{ role: 'user', content: 'other' }], 1000).content).not.toBe(a.content);
  });

  it('never produces more tokens than max_tokens', () => {
    const r = devChatReply(tok, messages, 5);
    expect(r).toMatchObject({ completionTokens: 5, finishReason: 'length' });
    expect(tok.count(r.content)).toBeLessThanOrEqual(5);
  });

  it('streams the same text as the plain answer, with usage last', async () => {
    const chat = createLocalChat('tollgate-dev-chat', tok);
    const body = { model: 'tollgate-dev-chat', messages, max_tokens: 20 };
    const plain = await chat.complete(body, new AbortController().signal);
    const stream = await chat.stream({ ...body, stream: true }, new AbortController().signal);
    if (!plain.ok || !stream.ok) throw new Error('local chat failed');
    const chunks: Json[] = [];
    for await (const c of stream.value) chunks.push(c);
    const text = chunks
      .map((c) => ((c.choices as Json[])[0]?.delta as { content?: string } | undefined)?.content ?? '')
      .join('');
    expect(text).toBe(((plain.value.choices as Json[])[0]!.message as { content: string }).content);
    expect(chunks.at(-1)?.usage).toEqual(plain.value.usage);
    expect(plain.value.usage).toMatchObject({ completion_tokens: 20 });
  });
});
