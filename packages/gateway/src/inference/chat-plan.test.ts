import { beforeAll, describe, expect, it } from 'vitest';
import { buildCatalogue, type ModelEntry } from './catalogue.ts';
import { capForBudget, countChatPrompt, planChat, upstreamChatBody } from './chat-plan.ts';
import type { ChatRequest } from './chat-request.ts';
import { loadTokenizer, type Tokenizer } from './tokenizer.ts';

let tok: Tokenizer;
let model: ModelEntry;
beforeAll(async () => {
  tok = await loadTokenizer('o200k_base');
  model = buildCatalogue([
    {
      id: 'm',
      kind: 'chat',
      upstream: {
        type: 'openai',
        baseUrl: 'http://127.0.0.1:1/v1',
        model: 'up/m',
        maxTokensParam: 'max_completion_tokens',
      },
      contextLength: 100,
      maxOutputTokens: 60,
      defaultMaxTokens: 30,
      inputPrice: '0.000001',
      outputPrice: '0.000004',
      pricingSourceVersion: '2026-01-01',
    },
  ]).get('m')!;
});
const req = (extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'm',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

describe('chat plan', () => {
  it('counts the prompt with OpenAI framing and counts special-token text as plain text', () => {
    expect(countChatPrompt(tok, [{ role: 'user', content: 'hi' }])).toBe(
      3 + 3 + tok.count('user') + tok.count('hi'),
    );
    expect(countChatPrompt(tok, [{ role: 'user', content: '<|endoftext|>' }])).toBeGreaterThan(7);
  });

  it('clamps max_tokens to the model limit and to the room left in the context', () => {
    expect(planChat(model, req({ max_tokens: 500 }), 10).maxTokens).toBe(60);
    expect(planChat(model, req({ max_tokens: 500 }), 80).maxTokens).toBe(20);
    expect(planChat(model, req(), 10).maxTokens).toBe(30);
    expect(planChat(model, req({ max_tokens: 40, max_completion_tokens: 25 }), 10).maxTokens).toBe(25);
    expect(() => planChat(model, req(), 100)).toThrow(/accepts at most 99/);
  });

  it('prices n choices as n output caps', () => {
    expect(planChat(model, req({ max_tokens: 10 }), 10).price).toBe(10n + 40n);
    expect(planChat(model, req({ max_tokens: 10, n: 3 }), 10).price).toBe(10n + 120n);
  });

  it('shrinks the cap only when the paid price no longer covers it', () => {
    const plan = planChat(model, req({ max_tokens: 10 }), 10);
    expect(capForBudget(model, plan, plan.price)).toBe(10);
    expect(capForBudget(model, { ...plan, promptTokens: 30 }, plan.price)).toBe(5);
    expect(capForBudget(model, { ...plan, promptTokens: 60 }, plan.price)).toBe(0);
  });

  it('sends the upstream model name, the clamped cap under the configured field, and forces usage on streams', () => {
    const body = upstreamChatBody(
      model,
      req({ max_tokens: 999, stream: true, stream_options: { include_usage: false } }),
      42,
    );
    expect(body).toEqual({
      model: 'up/m',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      max_completion_tokens: 42,
      stream_options: { include_usage: true },
    });
  });
});
