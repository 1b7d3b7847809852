/** Validating and pricing an OpenAI embeddings request (priced from input tokens alone). */
import { z } from 'zod';
import { ApiError } from '../errors.ts';
import type { ModelEntry } from './catalogue.ts';
import { tokenPrice } from './pricing.ts';
import type { Tokenizer } from './tokenizer.ts';

const MAX_INPUTS = 2048;
/** The in-process model computes on the event loop: keep one request short. */
export const MAX_LOCAL_INPUTS = 64;
const tokenIds = z.array(z.number().int().min(0).max(10_000_000)).min(1);

export const embeddingsRequestSchema = z.strictObject({
  model: z.string().min(1).max(256),
  input: z.union([
    z.string().min(1),
    z.array(z.string().min(1)).min(1).max(MAX_INPUTS),
    tokenIds,
    z.array(tokenIds).min(1).max(MAX_INPUTS),
  ]),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().min(1).max(100_000).optional(),
  user: z.string().max(256).optional(),
});
export type EmbeddingsRequest = z.infer<typeof embeddingsRequestSchema>;

/** Token count of each input: counted text, or the length of a token-id list. */
export function inputTokenCounts(tok: Tokenizer, input: EmbeddingsRequest['input']): number[] {
  if (typeof input === 'string') return [tok.count(input)];
  if (input.every((x) => typeof x === 'number')) return [input.length];
  return (input as (string | number[])[]).map((x) => (typeof x === 'string' ? tok.count(x) : x.length));
}

export interface EmbeddingsPlan {
  inputTokens: number;
  price: bigint;
}

export function planEmbeddings(model: ModelEntry, tok: Tokenizer, req: EmbeddingsRequest): EmbeddingsPlan {
  const counts = inputTokenCounts(tok, req.input);
  const longest = Math.max(...counts);
  if (longest > model.contextLength) {
    throw new ApiError(
      'invalid_request',
      `an input has ${longest} tokens; ${model.id} accepts at most ${model.contextLength} per input`,
      {
        param: 'input',
        reason: 'context_length_exceeded',
      },
    );
  }
  if (model.upstream.type === 'local-embeddings' && counts.length > MAX_LOCAL_INPUTS) {
    throw new ApiError(
      'invalid_request',
      `${model.id} takes at most ${MAX_LOCAL_INPUTS} inputs per request`,
      { param: 'input' },
    );
  }
  if (model.upstream.type === 'local-embeddings' && typeof req.input !== 'string') {
    // The local model reads text: token ids must decode, and that is checked before any 402.
    const lists = (req.input as unknown[]).every((x) => typeof x === 'number')
      ? [req.input as number[]]
      : (req.input as unknown[]);
    for (const ids of lists) {
      if (typeof ids === 'string') continue;
      try {
        tok.decode(ids as number[]);
      } catch {
        throw new ApiError('invalid_request', `input has token ids that ${tok.name} does not know`, {
          param: 'input',
        });
      }
    }
  }
  if (model.upstream.type === 'local-embeddings' && req.dimensions !== undefined && req.dimensions !== 512) {
    throw new ApiError('invalid_request', `${model.id} produces 512 dimensions only`, {
      param: 'dimensions',
    });
  }
  const inputTokens = counts.reduce((a, b) => a + b, 0);
  return { inputTokens, price: tokenPrice(model, inputTokens, 0) };
}
