/**
 * The official `openai` npm client, given payFetch as its fetch, against the gateway's
 * sandbox models: chat (plain and streaming) and embeddings, paid on either chain.
 */
import { type PayEvent, payFetch } from '@tollgate/client';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InferenceHarness, startInferenceHarness } from './inference-harness.ts';

let h: InferenceHarness;
beforeAll(async () => {
  h = await startInferenceHarness();
});
afterAll(async () => {
  await h?.close();
});

async function clientOn(chain: 'solana' | 'sui'): Promise<{ client: OpenAI; events: PayEvent[] }> {
  const events: PayEvent[] = [];
  const wallet = await h.newPayer(chain, '2');
  const fetch = payFetch(globalThis.fetch, {
    wallets: [wallet],
    maxPerRequest: '0.05',
    onEvent: (e) => events.push(e),
  });
  // payFetch owns retries (same proof); the SDK's own retries would pay again.
  return {
    client: new OpenAI({ baseURL: `${h.baseUrl}/v1`, apiKey: 'not-used', fetch, maxRetries: 0 }),
    events,
  };
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! ** 2;
    nb += b[i]! ** 2;
  }
  return dot / Math.sqrt(na * nb);
}

describe.each(['solana', 'sui'] as const)('openai client paying on %s', (chain) => {
  it('lists the models with their prices', async () => {
    const { client } = await clientOn(chain);
    const ids = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toEqual(expect.arrayContaining(['tollgate-dev-chat', 'universal-sentence-encoder-lite']));
  });

  it('creates a chat completion with the dev chat model and reports usage', async () => {
    const { client, events } = await clientOn(chain);
    const completion = await client.chat.completions.create({
      model: 'tollgate-dev-chat',
      messages: [{ role: 'user', content: `Hello over ${chain}` }],
      max_tokens: 200,
    });
    expect(completion.choices[0]?.message.content).toContain(`Hello over ${chain}`);
    expect(completion.choices[0]?.message.content).toContain('tollgate-dev-chat');
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
    expect(events.find((e) => e.type === 'paying')).toMatchObject({ option: { chain } });
  });

  it('streams a chat completion whose text matches the plain answer', async () => {
    const { client } = await clientOn(chain);
    const request = {
      model: 'tollgate-dev-chat',
      messages: [{ role: 'user' as const, content: 'stream this' }],
      max_tokens: 12,
    };
    const plain = await client.chat.completions.create(request);
    const stream = await client.chat.completions.create({ ...request, stream: true });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(plain.choices[0]?.message.content);
    expect(usage?.completion_tokens).toBe(12);
    expect(plain.choices[0]?.finish_reason).toBe('length');
  });

  it('embeds with the bundled Universal Sentence Encoder', async () => {
    const { client } = await clientOn(chain);
    const res = await client.embeddings.create({
      model: 'universal-sentence-encoder-lite',
      input: ['The cat sat on the mat', 'A kitten rests on a rug', 'Stock markets fell sharply today'],
    });
    expect(res.data).toHaveLength(3);
    const [cat, kitten, stocks] = res.data.map((d) => d.embedding);
    expect(cat).toHaveLength(512);
    expect(cosine(cat!, kitten!)).toBeGreaterThan(cosine(cat!, stocks!) + 0.2);
    expect(res.usage.prompt_tokens).toBeGreaterThan(10);
  });
});
