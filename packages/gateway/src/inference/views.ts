/** Public views of the catalogue: the OpenAI models list and the pricing table. */
import { formatAmount, USDC_DECIMALS } from '@tollgate/protocol';
import type { Config } from '../config.ts';
import type { ModelCatalogue, ModelEntry } from './catalogue.ts';
import { perMillionString, perTokenString } from './pricing.ts';

function prices(m: ModelEntry) {
  return {
    currency: 'USDC',
    prompt: perTokenString(m.inputPerMillion),
    completion: perTokenString(m.outputPerMillion),
    promptPerMillion: perMillionString(m.inputPerMillion),
    completionPerMillion: perMillionString(m.outputPerMillion),
  };
}

/** `GET /v1/models`: OpenAI's list shape, plus OpenRouter-style context and per-token prices. */
export function modelsList(c: ModelCatalogue) {
  return {
    object: 'list',
    data: c.models.map((m) => ({
      id: m.id,
      object: 'model',
      created: m.created,
      owned_by: m.ownedBy,
      kind: m.kind,
      description: m.description,
      context_length: m.contextLength,
      ...(m.kind === 'chat'
        ? { max_output_tokens: m.maxOutputTokens, default_max_tokens: m.defaultMaxTokens }
        : {}),
      pricing: prices(m),
      pricingSourceVersion: m.pricingSourceVersion,
    })),
  };
}

/** `GET /v1/pricing`: per-model prices, the platform fee policy and the quote formula's inputs. */
export function pricingTable(c: ModelCatalogue, config: Pick<Config, 'feeBps' | 'feeMin'>) {
  return {
    object: 'pricing',
    currency: 'USDC',
    scheme: 'exact',
    pricingSourceVersion: c.pricingSourceVersion,
    platformFee: { feeBps: config.feeBps, feeMin: formatAmount(config.feeMin, USDC_DECIMALS) },
    models: c.models.map((m) => ({
      id: m.id,
      kind: m.kind,
      contextLength: m.contextLength,
      ...(m.kind === 'chat'
        ? { maxOutputTokens: m.maxOutputTokens, defaultMaxTokens: m.defaultMaxTokens }
        : {}),
      tokenizer: m.tokenizer,
      ...prices(m),
      pricingSourceVersion: m.pricingSourceVersion,
    })),
  };
}
