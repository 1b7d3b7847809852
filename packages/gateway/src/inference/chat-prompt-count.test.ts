/**
 * Issue 10 item 8: every part of a chat request that an OpenAI-compatible upstream
 * tokenizes into the model's context is priced and counted against the context
 * length. Each case runs the route's own steps (parseChatRequest, countChatPrompt,
 * planChat) on a body with and without one field.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCatalogue, type ModelEntry } from './catalogue.ts';
import { countChatPrompt, planChat } from './chat-plan.ts';
import { type ChatRequest, chatMessageSchema, chatRequestSchema, parseChatRequest } from './chat-request.ts';
import { loadTokenizer, type Tokenizer } from './tokenizer.ts';

let tok: Tokenizer;
let model: ModelEntry;
beforeAll(async () => {
  tok = await loadTokenizer('o200k_base');
  model = buildCatalogue([
    {
      id: 'm',
      kind: 'chat',
      upstream: { type: 'openai', baseUrl: 'http://127.0.0.1:1/v1' },
      contextLength: 1_000_000,
      maxOutputTokens: 1_000,
      // 1 atomic USDC per prompt token: any counted token shows in the price.
      inputPrice: '0.000001',
      outputPrice: '0.000001',
      pricingSourceVersion: '2026-01-01',
    },
  ]).get('m')!;
});

type Body = Record<string, unknown>;
const parse = (body: Body): ChatRequest => parseChatRequest(Buffer.from(JSON.stringify(body)));
/** What the chat route counts for a body. */
const promptTokens = (body: Body): number => {
  const req = parse(body);
  return countChatPrompt(tok, req.messages, req);
};
const priceOf = (body: Body, m: ModelEntry = model): bigint =>
  planChat(m, parse(body), promptTokens(body)).price;

const user = { role: 'user', content: 'What is the weather in Paris?' };
const callId = 'call_7f3a9c2e1b';
const toolCall = {
  id: callId,
  type: 'function',
  function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
};
const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather for a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', description: 'City name' } },
      required: ['city'],
    },
  },
};
const chat = (messages: unknown[], extra: Body = {}): Body => ({
  model: 'm',
  max_tokens: 1,
  messages,
  ...extra,
});

/** [field, body without it, the same body with it] */
const cases: [string, Body, Body][] = [
  ['content (string)', chat([{ role: 'user', content: '' }]), chat([user])],
  [
    'content (text parts)',
    chat([{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }]),
    chat([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hello' },
          { type: 'text', text: 'and more' },
        ],
      },
    ]),
  ],
  [
    'content (refusal parts)',
    chat([user, { role: 'assistant', content: [{ type: 'text', text: 'Well' }] }]),
    chat([
      user,
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Well' },
          { type: 'refusal', refusal: 'I cannot share weather data for that place.' },
        ],
      },
    ]),
  ],
  [
    'assistant refusal',
    chat([user, { role: 'assistant', content: null }]),
    chat([user, { role: 'assistant', content: null, refusal: 'I cannot help with that request.' }]),
  ],
  ['name', chat([user]), chat([{ ...user, name: 'alice_from_accounting' }])],
  [
    'assistant name',
    chat([user, { role: 'assistant', content: 'Sunny.' }]),
    chat([user, { role: 'assistant', content: 'Sunny.', name: 'weather_bot' }]),
  ],
  [
    'assistant tool_calls',
    chat([user, { role: 'assistant', content: null }]),
    chat([user, { role: 'assistant', content: null, tool_calls: [toolCall] }]),
  ],
  [
    'tool message content',
    chat([user, { role: 'assistant', content: null, tool_calls: [toolCall] }]),
    chat([
      user,
      { role: 'assistant', content: null, tool_calls: [toolCall] },
      { role: 'tool', tool_call_id: callId, content: '{"temp_c":21,"sky":"clear"}' },
    ]),
  ],
  [
    'tool_call_id',
    chat([user, { role: 'tool', tool_call_id: 'c', content: 'x' }]),
    chat([user, { role: 'tool', tool_call_id: `${callId}_with_a_much_longer_identifier`, content: 'x' }]),
  ],
  ['tools', chat([user]), chat([user], { tools: [weatherTool] })],
  [
    'tools (one more)',
    chat([user], { tools: [weatherTool] }),
    chat([user], { tools: [weatherTool, weatherTool] }),
  ],
  [
    'tool_choice',
    chat([user], { tools: [weatherTool] }),
    chat([user], {
      tools: [weatherTool],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    }),
  ],
  [
    'response_format json_schema',
    chat([user]),
    chat([user], {
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'weather',
          strict: true,
          schema: { type: 'object', properties: { temp_c: { type: 'number' } }, required: ['temp_c'] },
        },
      },
    }),
  ],
  ['stop (string)', chat([user]), chat([user], { stop: 'END OF ANSWER' })],
  ['stop (list)', chat([user]), chat([user], { stop: ['END OF ANSWER', '\n\nQuestion:'] })],
];

describe('every tokenized field is counted', () => {
  it.each(cases)('%s costs more than the same request without it', (_field, without, withField) => {
    expect(promptTokens(withField)).toBeGreaterThan(promptTokens(without));
    expect(priceOf(withField)).toBeGreaterThan(priceOf(without));
  });

  it.each(cases)('%s counts against the context length', (_field, without, withField) => {
    // Exactly one token of room for the body without the field.
    const tight: ModelEntry = { ...model, contextLength: promptTokens(without) + 1 };
    expect(() => planChat(tight, parse(without), promptTokens(without))).not.toThrow();
    expect(() => planChat(tight, parse(withField), promptTokens(withField))).toThrow(
      expect.objectContaining({ extra: expect.objectContaining({ reason: 'context_length_exceeded' }) }),
    );
  });

  it('counts text parts at least as much as the same text in one string', () => {
    const parts = ['Hello', ' world', '!'];
    expect(
      promptTokens(chat([{ role: 'user', content: parts.map((text) => ({ type: 'text', text })) }])),
    ).toBeGreaterThanOrEqual(promptTokens(chat([{ role: 'user', content: parts.join('\n') }])));
  });
});

/**
 * OpenAI's own estimate for function definitions (openai-cookbook, "How to count
 * tokens with tiktoken", num_tokens_for_tools, gpt-4o constants): the gateway's
 * count of `tools` must never be below it.
 */
function cookbookToolTokens(tools: (typeof weatherTool)[]): number {
  let n = 0;
  for (const t of tools) {
    const f = t.function as {
      name: string;
      description?: string;
      parameters?: { properties?: Record<string, { type: string; description?: string; enum?: string[] }> };
    };
    n += 7 + tok.count(`${f.name}:${f.description ?? ''}`);
    const props = Object.entries(f.parameters?.properties ?? {});
    if (props.length > 0) n += 3;
    for (const [key, p] of props) {
      n += 3;
      if (p.enum) n += -3 + p.enum.reduce((s, item) => s + 3 + tok.count(item), 0);
      n += tok.count(`${key}:${p.type}:${(p.description ?? '').replace(/\.$/, '')}`);
    }
  }
  return n + 12;
}

describe('tool definitions', () => {
  const minimal = { type: 'function', function: { name: 'f' } } as unknown as typeof weatherTool;
  const enumTool = {
    type: 'function',
    function: {
      name: 'set_mode',
      description: 'Switch the mode.',
      parameters: {
        type: 'object',
        properties: { mode: { type: 'string', description: 'Mode', enum: ['a', 'b', 'c', 'd', 'e'] } },
      },
    },
  } as unknown as typeof weatherTool;

  it.each([
    ['a minimal tool', [minimal]],
    ['a described tool', [weatherTool]],
    ['an enum parameter', [enumTool]],
    ['several tools', [minimal, weatherTool, enumTool, minimal]],
  ])('are never counted below OpenAI’s estimate: %s', (_name, tools) => {
    const base = promptTokens(chat([user]));
    expect(promptTokens(chat([user], { tools })) - base).toBeGreaterThanOrEqual(cookbookToolTokens(tools));
  });
});

/**
 * Every field the request schema accepts is either counted above or listed here as
 * never rendered into the model's context. A new field fails this test until it is
 * classified (and, if tokenized, counted).
 */
const COUNTED = ['messages', 'tools', 'tool_choice', 'response_format', 'stop'];
const NOT_TOKENIZED = [
  'model', // routing
  'max_tokens', // sampling and output controls: numbers, flags, enums
  'max_completion_tokens',
  'stream',
  'stream_options',
  'temperature',
  'top_p',
  'n',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias', // token ids to weights, applied at sampling
  'logprobs',
  'top_logprobs',
  'seed',
  'user', // end-user id for abuse monitoring, ≤ 256 characters, never in the prompt
  'parallel_tool_calls',
  'reasoning_effort',
];
const MESSAGE_FIELDS = ['role', 'content', 'name', 'refusal', 'tool_calls', 'tool_call_id'];

describe('field classification', () => {
  it('every request field is counted or known not to reach the model', () => {
    expect(Object.keys(chatRequestSchema.shape).sort()).toEqual([...COUNTED, ...NOT_TOKENIZED].sort());
  });

  it('every message field is counted', () => {
    for (const option of chatMessageSchema.options) {
      for (const key of Object.keys(option.shape)) expect(MESSAGE_FIELDS).toContain(key);
    }
  });
});
