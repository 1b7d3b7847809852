/**
 * The MCP tools the gateway offers (issue 15): every enabled endpoint of the directory's
 * projects, and the inference routes (`chat`, `embeddings`). A tool says what it costs
 * per chain (in its description and in `_meta["tollgate/price"]`) and takes either the
 * provider's `inputSchema` (the JSON body of POST/PUT/PATCH, the query parameters of
 * the others) or a generic `{ query, body }`. Nothing is cached here: the catalogue
 * (marketplace/catalog.ts) already is.
 */
import { formatAmount, USDC_DECIMALS } from '@tollgate/protocol';
import type { ChainId, ChainVerifier } from '../chains/chain.ts';
import type { Config } from '../config.ts';
import type { ModelCatalogue, ModelEntry } from '../inference/catalogue.ts';
import { perMillionString } from '../inference/pricing.ts';
import type { Catalog, CatalogEntry } from '../marketplace/catalog.ts';
import { marketplaceQuote } from '../marketplace/quote.ts';
import type { V2Schemes } from '../payments/v2-offer.ts';
import type { Endpoint, ProjectRepo } from '../store/store.ts';
import { endpointInput, type ToolInput } from './tool-input.ts';
import { slugOfTool, toolNames } from './tool-names.ts';

export type Json = Record<string, unknown>;

/** What a tool call becomes: one marketplace endpoint, or an inference route. */
export type ToolTarget =
  | { kind: 'endpoint'; slug: string; endpoint: Endpoint; input: ToolInput }
  | { kind: 'chat' | 'embeddings'; input: ToolInput };

export interface McpTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: Json;
  _meta: Json;
  target: ToolTarget;
}

/** `/mcp` serves the whole directory and the inference tools; `/mcp/:slug` one project. */
export interface ToolScope {
  slug?: string;
}

export interface ToolSources {
  projects: Pick<ProjectRepo, 'listListed'>;
  catalog: Catalog;
  config: Readonly<Config>;
  verifiers: Partial<Record<ChainId, ChainVerifier>>;
  models: ModelCatalogue;
  v2Schemes?: V2Schemes;
}

/** Projects per `tools/list` page of the whole directory (the cursor is the last slug). */
const PROJECTS_PER_PAGE = 50;

const usdc = (atomic: bigint) => formatAmount(atomic, USDC_DECIMALS);

export function createTools(s: ToolSources) {
  function endpointTool(name: string, entry: CatalogEntry, e: Endpoint): McpTool {
    const slug = entry.project.slug;
    const quote = marketplaceQuote(slug, e, entry.rails, s.config, s.verifiers);
    const total = quote.price + quote.fee;
    const chains = quote.options.map((o) => ({
      chain: o.chain,
      network: o.network,
      amount: usdc(o.splits.reduce((sum, x) => sum + x.amount, 0n)),
    }));
    const stock = entry.project.x402Exact
      ? quote.options.filter((o) => s.v2Schemes?.[o.chain]?.network === o.network).map((o) => o.chain)
      : [];
    const price =
      total === 0n
        ? 'Free.'
        : `Price: ${usdc(total)} USDC per call (${usdc(quote.price)} to the provider + ${usdc(quote.fee)} platform fee), ` +
          `payable on ${chains.map((c) => c.chain).join(' and ') || 'no chain right now'} with x402` +
          (stock.length > 0 ? ` (stock x402 v2 "exact" too on ${stock.join(' and ')})` : '') +
          '.';
    const input = endpointInput(e);
    const what = e.description || `${entry.project.name}: ${e.method} /${e.path}`;
    return {
      name,
      title: `${entry.project.name}: ${e.method} /${e.path}`,
      description: `${what}\n\n${e.method} /p/${slug}/${e.path} on Tollgate. ${price} ${input.hint}`,
      inputSchema: input.schema,
      _meta: {
        'tollgate/price': {
          currency: 'USDC',
          price: usdc(quote.price),
          fee: usdc(quote.fee),
          total: usdc(total),
          chains,
          x402Exact: stock,
        },
        'tollgate/http': { method: e.method, url: `${s.config.publicBaseUrl}/p/${slug}/${e.path}` },
      },
      target: { kind: 'endpoint', slug, endpoint: e, input },
    };
  }

  function projectTools(entry: CatalogEntry, onlyEnabled: boolean): McpTool[] {
    const tools: McpTool[] = [];
    // Names over every endpoint (disabled ones too), so enabling one never renames another.
    for (const [name, e] of toolNames(entry.project.slug, [...entry.endpoints.values()])) {
      if (!onlyEnabled || e.enabled) tools.push(endpointTool(name, entry, e));
    }
    return tools.sort((a, b) => a.name.localeCompare(b.name));
  }

  const modelPrices = (m: ModelEntry) =>
    m.kind === 'chat'
      ? `${m.id}: ${perMillionString(m.inputPerMillion)} USDC per million prompt tokens, ${perMillionString(m.outputPerMillion)} per million completion tokens`
      : `${m.id}: ${perMillionString(m.inputPerMillion)} USDC per million input tokens`;
  const feeText = () =>
    `plus the platform fee (${s.config.feeBps / 100} %, at least ${usdc(s.config.feeMin)} USDC)`;
  const modelMeta = (models: ModelEntry[]) => ({
    'tollgate/price': {
      currency: 'USDC',
      feeBps: s.config.feeBps,
      feeMin: usdc(s.config.feeMin),
      models: models.map((m) => ({
        id: m.id,
        inputPerMillion: perMillionString(m.inputPerMillion),
        ...(m.kind === 'chat' ? { outputPerMillion: perMillionString(m.outputPerMillion) } : {}),
      })),
      chains: Object.entries(s.verifiers).map(([chain, v]) => ({ chain, network: v?.network })),
    },
  });

  // The model catalogue and the fee policy are fixed for the life of the process.
  let inference: McpTool[] | null = null;
  const inferenceTools = (): McpTool[] => {
    inference ??= buildInferenceTools();
    return inference;
  };

  function buildInferenceTools(): McpTool[] {
    const tools: McpTool[] = [];
    const chat = s.models.models.filter((m) => m.kind === 'chat');
    const embeddings = s.models.models.filter((m) => m.kind === 'embeddings');
    if (chat.length > 0) {
      const input = chatInput(chat);
      tools.push({
        name: 'chat',
        title: 'Chat completion',
        description:
          'An OpenAI-compatible chat completion (POST /v1/chat/completions, not streamed). Priced per call from the prompt ' +
          `and max_tokens before it runs (worst case), ${feeText()}; paid with x402 on ${Object.keys(s.verifiers).join(' and ')}.\n` +
          chat.map(modelPrices).join('\n'),
        inputSchema: input.schema,
        _meta: modelMeta(chat),
        target: { kind: 'chat', input },
      });
    }
    if (embeddings.length > 0) {
      const input = embeddingsInput(embeddings);
      tools.push({
        name: 'embeddings',
        title: 'Embeddings',
        description:
          `OpenAI-compatible embeddings (POST /v1/embeddings), priced from the input tokens, ${feeText()}; ` +
          `paid with x402 on ${Object.keys(s.verifiers).join(' and ')}.\n${embeddings.map(modelPrices).join('\n')}`,
        inputSchema: input.schema,
        _meta: modelMeta(embeddings),
        target: { kind: 'embeddings', input },
      });
    }
    return tools;
  }

  return {
    /** One page of tools: a project's, or the inference tools then the directory's projects page by page. */
    async list(scope: ToolScope, cursor?: string): Promise<{ tools: McpTool[]; nextCursor?: string }> {
      if (scope.slug !== undefined) {
        const entry = await s.catalog.get(scope.slug);
        return { tools: entry ? projectTools(entry, true) : [] };
      }
      const projects = await s.projects.listListed({
        limit: PROJECTS_PER_PAGE,
        ...(cursor ? { after: cursor } : {}),
      });
      const tools = cursor ? [] : inferenceTools();
      for (const p of projects) {
        const entry = await s.catalog.get(p.slug);
        if (entry) tools.push(...projectTools(entry, true));
      }
      const last = projects.at(-1);
      return projects.length === PROJECTS_PER_PAGE && last ? { tools, nextCursor: last.slug } : { tools };
    },

    /** The tool a `tools/call` names within the scope, or null when there is none. */
    async resolve(scope: ToolScope, name: string): Promise<McpTool | null> {
      if (scope.slug === undefined && (name === 'chat' || name === 'embeddings')) {
        return inferenceTools().find((t) => t.name === name) ?? null;
      }
      const slug = slugOfTool(name);
      if (!slug || (scope.slug !== undefined && slug !== scope.slug)) return null;
      const entry = await s.catalog.get(slug);
      if (!entry) return null;
      const endpoint = toolNames(slug, [...entry.endpoints.values()]).get(name);
      return endpoint ? endpointTool(name, entry, endpoint) : null;
    },
  };
}

export type Tools = ReturnType<typeof createTools>;

function chatInput(models: ModelEntry[]): ToolInput {
  const text = { type: 'string', maxLength: 1_000_000 };
  return {
    mode: 'body',
    hint: 'Arguments: the chat request (model, messages, max_tokens, temperature, top_p).',
    schema: {
      type: 'object',
      properties: {
        model: { type: 'string', enum: models.map((m) => m.id), description: 'The model.' },
        messages: {
          type: 'array',
          minItems: 1,
          maxItems: 10_000,
          items: {
            type: 'object',
            properties: {
              role: { type: 'string', enum: ['system', 'developer', 'user', 'assistant'] },
              content: text,
            },
            required: ['role', 'content'],
            additionalProperties: false,
          },
        },
        max_tokens: {
          type: 'integer',
          minimum: 1,
          description: "Completion token cap (the price counts it; default: the model's).",
        },
        temperature: { type: 'number', minimum: 0, maximum: 2 },
        top_p: { type: 'number', minimum: 0, maximum: 1 },
      },
      required: ['model', 'messages'],
      additionalProperties: false,
    },
  };
}

function embeddingsInput(models: ModelEntry[]): ToolInput {
  return {
    mode: 'body',
    hint: 'Arguments: the embeddings request (model, input: a string or an array of strings).',
    schema: {
      type: 'object',
      properties: {
        model: { type: 'string', enum: models.map((m) => m.id) },
        input: {
          oneOf: [
            { type: 'string', minLength: 1 },
            { type: 'array', minItems: 1, maxItems: 2048, items: { type: 'string', minLength: 1 } },
          ],
        },
        dimensions: { type: 'integer', minimum: 1 },
      },
      required: ['model', 'input'],
      additionalProperties: false,
    },
  };
}
