import { beforeAll, describe, expect, it } from 'vitest';
import { buildCatalogue, type ModelCatalogue } from './catalogue.ts';
import {
  embeddingsRequestSchema,
  inputTokenCounts,
  MAX_LOCAL_INPUTS,
  planEmbeddings,
} from './embeddings-request.ts';
import { loadTokenizer, type Tokenizer } from './tokenizer.ts';

let tok: Tokenizer;
let catalogue: ModelCatalogue;
beforeAll(async () => {
  tok = await loadTokenizer('o200k_base');
  catalogue = buildCatalogue({
    pricingSourceVersion: '2026-01-01',
    models: [
      {
        id: 'remote',
        kind: 'embeddings',
        upstream: { type: 'openai', baseUrl: 'http://127.0.0.1:1/v1' },
        contextLength: 8,
        inputPrice: '0.00000002',
      },
      {
        id: 'local',
        kind: 'embeddings',
        upstream: { type: 'local-embeddings' },
        contextLength: 100,
        inputPrice: '0.000001',
      },
    ],
  });
});

describe('embeddings requests', () => {
  it('counts text with the tokenizer and token-id lists by their length', () => {
    expect(inputTokenCounts(tok, 'hello world')).toEqual([2]);
    expect(inputTokenCounts(tok, ['a', 'hello world'])).toEqual([1, 2]);
    expect(inputTokenCounts(tok, [1, 2, 3])).toEqual([3]);
    expect(inputTokenCounts(tok, [[1, 2], [3]])).toEqual([2, 1]);
  });

  it('prices input tokens only, rounded up, and bounds each input by the context length', () => {
    const remote = catalogue.get('remote')!;
    expect(planEmbeddings(remote, tok, { model: 'remote', input: ['hello world', 'hi'] })).toEqual({
      inputTokens: 3,
      price: 1n,
    });
    expect(() =>
      planEmbeddings(remote, tok, { model: 'remote', input: [[1, 2, 3, 4, 5, 6, 7, 8, 9]] }),
    ).toThrow(/at most 8/);
  });

  it('keeps requests to the in-process model small and at its native 512 dimensions', () => {
    const local = catalogue.get('local')!;
    expect(planEmbeddings(local, tok, { model: 'local', input: 'x' }).price).toBe(1n);
    expect(() =>
      planEmbeddings(local, tok, { model: 'local', input: Array(MAX_LOCAL_INPUTS + 1).fill('x') }),
    ).toThrow(/at most/);
    expect(() => planEmbeddings(local, tok, { model: 'local', input: 'x', dimensions: 256 })).toThrow(/512/);
    expect(() => planEmbeddings(local, tok, { model: 'local', input: [[1, 2], [5_000_000]] })).toThrow(
      /does not know/,
    );
    expect(planEmbeddings(local, tok, { model: 'local', input: [1, 2] }).inputTokens).toBe(2);
  });

  it('rejects empty inputs and unknown fields', () => {
    expect(embeddingsRequestSchema.safeParse({ model: 'm', input: '' }).success).toBe(false);
    expect(embeddingsRequestSchema.safeParse({ model: 'm', input: [] }).success).toBe(false);
    expect(embeddingsRequestSchema.safeParse({ model: 'm', input: 'x', extra: 1 }).success).toBe(false);
  });
});
