/**
 * The discovery read model (DESIGN §4.12): every paid resource a stock x402 v2 client
 * can pay, as x402 bazaar items (`GET /discovery/resources`) and as the manifest at
 * `/.well-known/x402`.
 *
 * Listed: each enabled, priced endpoint of the listed projects that opted in
 * (`x402Exact`) and has a v2 entry on some chain; the inference routes. `accepts` are
 * templates of the entries a real 402 offers: the same network, amount, asset, payTo and
 * timeout, with `extra` lacking the per-request `memo` and `paymentRequirementId` that
 * only a 402 issues. With no v2 scheme configured nothing is listed.
 *
 * Built from the provider catalogue (the cache the /p route reads) and kept for a short
 * TTL, so a busy discovery endpoint costs no more than one rebuild per TTL.
 */
import { formatAmount, USDC_DECIMALS, type V2Requirements } from '@tollgate/protocol';
import type { ChainId } from '../chains/chain.ts';
import type { Deps } from '../deps.ts';
import type { ModelEntry } from '../inference/catalogue.ts';
import { perMillionString, perTokenString, tokenPrice } from '../inference/pricing.ts';
import { inferenceQuote } from '../inference/quote.ts';
import { type BazaarExtension, bazaarExtension, type InferenceRoute } from '../payments/bazaar.ts';
import type { Quote } from '../payments/requirement.ts';
import type { QuotedOption } from '../payments/requirement-token.ts';
import { type V2PayTo, type V2Schemes, v2EntryFor } from '../payments/v2-offer.ts';
import type { Endpoint, Project, Rail } from '../store/store.ts';
import { marketplaceQuote, platformAddress, USDC_ASSET as USDC_ASSET_BY_CHAIN } from './quote.ts';

/** The `metadata.provider` of the inference routes (a reserved slug, so no project can take it). */
export const PLATFORM_PROVIDER = 'tollgate';
export const PLATFORM_NAME = 'Tollgate';
export const INFERENCE_CATEGORY = 'inference';

/** The reference request behind an inference item's `amount`. */
export const REFERENCE_PROMPT_TOKENS = 1000;

export interface DiscoveryMetadata {
  category: string;
  /** Project slug (`tollgate` for the inference routes). */
  provider: string;
  providerName: string;
  description: string;
  method: string;
  /** `/p/<slug>/<path>` or `/v1/...`. */
  path: string;
  /** What the v2 entry asks, decimal USDC (endpoint price + platform fee; inference: the reference request). */
  priceUsdc: string;
  pricing: Record<string, unknown>;
  schemes: string[];
  /** CAIP-2 networks of `accepts`. */
  networks: string[];
  chains: ChainId[];
  /** The provider's schemas as given (marketplace), or the request schema (inference). */
  inputSchema?: unknown;
  outputSchema?: unknown;
  /** False while the endpoint fails health checks (a request gets 503 endpoint_unavailable). */
  available: boolean;
}

/** One item of `GET /discovery/resources` (x402 v2 §8, `DiscoveryResource` in `@x402/extensions`). */
export interface DiscoveryItem {
  resource: string;
  type: 'http';
  x402Version: 2;
  accepts: V2Requirements[];
  /** ISO 8601 (as `@x402/extensions` types it). */
  lastUpdated: string;
  description: string;
  mimeType: string;
  serviceName?: string;
  tags?: string[];
  metadata: DiscoveryMetadata;
  extensions?: { bazaar: BazaarExtension };
}

export interface DiscoveryFilter {
  type?: string;
  provider?: string;
  category?: string;
  network?: string;
  scheme?: string;
  payTo?: string;
  extensions?: string;
}

/** Placeholders for v2EntryFor: discovery strips what they produce. */
const TEMPLATE_NONCE = 'discovery';
const TEMPLATE_TOKEN = 'discovery';

/**
 * The v2 entry a real 402 would offer for this option, without the per-request parts:
 * `extra` keeps what the scheme always sends (Solana: `feePayer`) but no `memo` or
 * `paymentRequirementId`. Null where that chain has no v2 scheme or payee.
 */
export function v2Template(
  option: Omit<QuotedOption, 'memo'>,
  schemes: V2Schemes,
  payTo: V2PayTo,
): V2Requirements | null {
  const entry = v2EntryFor(option, TEMPLATE_NONCE, TEMPLATE_TOKEN, schemes, payTo);
  if (!entry) return null;
  const { memo: _memo, paymentRequirementId: _token, ...extra } = entry.extra;
  return { ...entry, extra };
}

/** Where v2 payments go: `deps.v2PayTo`, else the platform's address (as assembleDeps gives the 402 path). */
function v2PayToOf(deps: Deps): V2PayTo {
  return deps.v2PayTo ?? ((chain) => platformAddress(deps.config, chain));
}

function templates(quote: Quote, deps: Deps): V2Requirements[] {
  const schemes = deps.v2Schemes ?? {};
  const payTo = v2PayToOf(deps);
  return quote.options
    .map((o) => v2Template(o, schemes, payTo))
    .filter((e): e is V2Requirements => e !== null);
}

const usdc = (atomic: bigint) => formatAmount(atomic, USDC_DECIMALS);

const iso = (...stamps: string[]): string => {
  const ms = Math.max(...stamps.map((s) => Date.parse(s)).filter((n) => Number.isFinite(n)));
  return new Date(Number.isFinite(ms) ? ms : 0).toISOString();
};

/** `serviceName` and `tags` as the bazaar spec allows them (printable ASCII, at most 32 characters). */
const PRINTABLE_32 = /^[\x20-\x7e]{1,32}$/;

function chainsOf(quote: Quote, accepts: V2Requirements[], deps: Deps): ChainId[] {
  const schemes = deps.v2Schemes ?? {};
  return quote.options
    .map((o) => o.chain)
    .filter((c) => accepts.some((a) => schemes[c]?.caip2 === a.network));
}

function endpointItem(
  deps: Deps,
  base: string,
  project: Project,
  endpoint: Endpoint,
  rails: readonly Rail[],
): DiscoveryItem | null {
  const quote = marketplaceQuote(project.slug, endpoint, rails, deps.config, deps.verifiers);
  if (quote.price + quote.fee === 0n) return null;
  const accepts = templates(quote, deps);
  if (accepts.length === 0) return null;
  const path = `/p/${project.slug}/${endpoint.path}`;
  const description = endpoint.description || `${endpoint.method} ${endpoint.path}`;
  const bazaar = bazaarExtension(endpoint);
  return {
    resource: `${base}${path}`,
    type: 'http',
    x402Version: 2,
    accepts,
    lastUpdated: iso(endpoint.updatedAt, project.updatedAt, ...rails.map((r) => r.updatedAt)),
    description,
    mimeType: 'application/json',
    ...(PRINTABLE_32.test(project.name) ? { serviceName: project.name } : {}),
    ...(PRINTABLE_32.test(project.category) ? { tags: [project.category] } : {}),
    metadata: {
      category: project.category,
      provider: project.slug,
      providerName: project.name,
      description,
      method: endpoint.method,
      path,
      priceUsdc: usdc(quote.price + quote.fee),
      pricing: {
        basis: 'per_request',
        currency: 'USDC',
        price: usdc(quote.price),
        fee: usdc(quote.fee),
        total: usdc(quote.price + quote.fee),
      },
      schemes: ['exact'],
      networks: accepts.map((a) => a.network),
      chains: chainsOf(quote, accepts, deps),
      ...(endpoint.inputSchema != null ? { inputSchema: endpoint.inputSchema } : {}),
      ...(endpoint.outputSchema != null ? { outputSchema: endpoint.outputSchema } : {}),
      available: deps.health.isHealthy(endpoint.id),
    },
    ...(bazaar ? { extensions: { bazaar } } : {}),
  };
}

/** The JSON body schema inside a body-method extension. */
function bodySchemaOf(ext: BazaarExtension): unknown {
  const input = (ext.schema.properties as Record<string, { properties?: Record<string, unknown> }>).input;
  return input?.properties?.body;
}

const INFERENCE: Record<InferenceRoute, { path: string; kind: ModelEntry['kind']; what: string }> = {
  chat: {
    path: '/v1/chat/completions',
    kind: 'chat',
    what: 'OpenAI-compatible chat completions, priced per token from the request (prompt tokens + the completion cap)',
  },
  embeddings: {
    path: '/v1/embeddings',
    kind: 'embeddings',
    what: 'OpenAI-compatible embeddings, priced per input token',
  },
};

/**
 * An inference route as one item. Its price depends on the body, so `amount` is the price
 * of a reference request on the cheapest model of the kind: REFERENCE_PROMPT_TOKENS
 * prompt tokens and (chat) the model's default completion cap, plus the platform fee;
 * `metadata.pricing` carries every model's per-token prices. A real 402 quotes the body.
 */
function inferenceItem(deps: Deps, base: string, route: InferenceRoute): DiscoveryItem | null {
  const spec = INFERENCE[route];
  const catalogue = deps.inference.catalogue;
  const models = catalogue.models.filter((m) => m.kind === spec.kind);
  if (models.length === 0) return null;
  const completion = (m: ModelEntry) => (spec.kind === 'chat' ? m.defaultMaxTokens : 0);
  const priceOf = (m: ModelEntry) => tokenPrice(m, REFERENCE_PROMPT_TOKENS, completion(m));
  const reference = models.reduce((a, b) => (priceOf(b) < priceOf(a) ? b : a));
  const price = priceOf(reference);
  const quote = inferenceQuote(
    {
      subject: `inf:${route}:${reference.id}`,
      resource: `POST ${spec.path}`,
      description: spec.what,
      price,
      pricingSourceVersion: reference.pricingSourceVersion,
    },
    deps.config,
    deps.verifiers,
  );
  if (quote.price + quote.fee === 0n) return null;
  const accepts = templates(quote, deps);
  if (accepts.length === 0) return null;
  const bazaar = bazaarExtension({ inference: route, model: reference.id });
  return {
    resource: `${base}${spec.path}`,
    type: 'http',
    x402Version: 2,
    accepts,
    lastUpdated: iso(`${catalogue.pricingSourceVersion}T00:00:00Z`),
    description: spec.what,
    mimeType: 'application/json',
    serviceName: PLATFORM_NAME,
    tags: [INFERENCE_CATEGORY],
    metadata: {
      category: INFERENCE_CATEGORY,
      provider: PLATFORM_PROVIDER,
      providerName: PLATFORM_NAME,
      description: spec.what,
      method: 'POST',
      path: spec.path,
      priceUsdc: usdc(quote.price + quote.fee),
      pricing: {
        basis: 'per_token',
        currency: 'USDC',
        reference: {
          model: reference.id,
          promptTokens: REFERENCE_PROMPT_TOKENS,
          ...(spec.kind === 'chat' ? { completionTokens: completion(reference) } : {}),
          price: usdc(quote.price),
          fee: usdc(quote.fee),
          total: usdc(quote.price + quote.fee),
        },
        platformFee: { feeBps: deps.config.feeBps, feeMin: usdc(deps.config.feeMin) },
        pricingSourceVersion: catalogue.pricingSourceVersion,
        table: `${base}/v1/pricing`,
        models: models.map((m) => ({
          id: m.id,
          prompt: perTokenString(m.inputPerMillion),
          promptPerMillion: perMillionString(m.inputPerMillion),
          ...(spec.kind === 'chat'
            ? {
                completion: perTokenString(m.outputPerMillion),
                completionPerMillion: perMillionString(m.outputPerMillion),
                defaultMaxTokens: m.defaultMaxTokens,
              }
            : {}),
        })),
      },
      schemes: ['exact'],
      networks: accepts.map((a) => a.network),
      chains: chainsOf(quote, accepts, deps),
      ...(bazaar ? { inputSchema: bodySchemaOf(bazaar) } : {}),
      available: true,
    },
    ...(bazaar ? { extensions: { bazaar } } : {}),
  };
}

/** Listed projects are read in pages of this many, and this many catalogue entries are loaded at once. */
const PAGE = 200;
const PARALLEL = 16;
const YIELD_EVERY = 32;

async function buildItems(deps: Deps): Promise<DiscoveryItem[]> {
  const base = deps.config.publicBaseUrl.replace(/\/+$/, '');
  const items: DiscoveryItem[] = [];
  for (const route of ['chat', 'embeddings'] as const) {
    const item = inferenceItem(deps, base, route);
    if (item) items.push(item);
  }
  // With no v2 scheme there is nothing a stock client can pay: skip the catalogue walk.
  if (Object.keys(deps.v2Schemes ?? {}).length === 0) return items;

  const optedIn: string[] = [];
  for (let after: string | undefined; ; ) {
    const page = await deps.store.projects.listListed({ limit: PAGE, ...(after ? { after } : {}) });
    for (const p of page) if (p.x402Exact) optedIn.push(p.slug);
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.slug;
  }
  let built = 0;
  for (let i = 0; i < optedIn.length; i += PARALLEL) {
    const entries = await Promise.all(optedIn.slice(i, i + PARALLEL).map((slug) => deps.catalog.get(slug)));
    for (const entry of entries) {
      // The snapshot is newer than the listing: the project may have opted out since.
      if (!entry?.project.x402Exact) continue;
      const endpoints = [...entry.endpoints.values()]
        .filter((e) => e.enabled)
        .sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
      for (const e of endpoints) {
        const item = endpointItem(deps, base, entry.project, e, entry.rails);
        if (item) items.push(item);
        // A first build checks every provider schema (milliseconds each): let requests in between.
        if (++built % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }
  return items;
}

function matches(item: DiscoveryItem, f: DiscoveryFilter): boolean {
  if (f.type !== undefined && f.type !== item.type) return false;
  if (f.provider !== undefined) {
    const p = f.provider.toLowerCase();
    if (item.metadata.provider !== f.provider && item.metadata.providerName.toLowerCase() !== p) return false;
  }
  if (f.category !== undefined && item.metadata.category !== f.category) return false;
  if (f.network !== undefined && !item.accepts.some((a) => a.network === f.network)) return false;
  if (f.scheme !== undefined && !item.accepts.some((a) => a.scheme === f.scheme)) return false;
  if (f.payTo !== undefined && !item.accepts.some((a) => a.payTo === f.payTo)) return false;
  if (f.extensions !== undefined && !(item.extensions && Object.hasOwn(item.extensions, f.extensions)))
    return false;
  return true;
}

export interface DiscoveryPage {
  x402Version: 2;
  items: DiscoveryItem[];
  pagination: { limit: number; offset: number; total: number };
}

/** How long one build of the list is served. */
export const DISCOVERY_TTL_MS = 10_000;

/** The discovery read model over `deps`: one list per TTL, built once however many requests wait for it. */
export function createDiscovery(deps: Deps, ttlMs = DISCOVERY_TTL_MS) {
  let cached: { at: number; items: DiscoveryItem[] } | null = null;
  let building: Promise<DiscoveryItem[]> | null = null;

  async function items(): Promise<DiscoveryItem[]> {
    if (cached && deps.now() - cached.at < ttlMs) return cached.items;
    if (!building) {
      const startedAt = deps.now();
      building = buildItems(deps)
        .then((list) => {
          cached = { at: startedAt, items: list };
          return list;
        })
        .finally(() => {
          building = null;
        });
    }
    try {
      return await building;
    } catch (err) {
      // The store is unreachable: the last list is better than an error, and it is retried next time.
      if (cached) return cached.items;
      throw err;
    }
  }

  return {
    items,
    /** One page of the items that pass the filter; `total` counts them all. */
    async page(filter: DiscoveryFilter, limit: number, offset: number): Promise<DiscoveryPage> {
      const all = (await items()).filter((i) => matches(i, filter));
      return {
        x402Version: 2,
        items: all.slice(offset, offset + limit),
        pagination: { limit, offset, total: all.length },
      };
    },
    /** Drops the cached list (tests, or after a local edit). */
    invalidate(): void {
      cached = null;
    },
  };
}

export type Discovery = ReturnType<typeof createDiscovery>;

/** Manifest `resources` lists at most this many URLs; `/discovery/resources` has them all. */
export const MANIFEST_MAX_RESOURCES = 100;

/**
 * `GET /.well-known/x402`: what an agent needs to start (no published format exists; this
 * one is Tollgate's, documented in docs/discovery.md). x402 v2 kinds in the `/supported`
 * shape; the SPEC format (`X-PAYMENT`, x402Version 1) as the `tollgate` extension.
 */
export async function wellKnownManifest(deps: Deps, discovery: Discovery) {
  const base = deps.config.publicBaseUrl.replace(/\/+$/, '');
  const items = await discovery.items();
  const schemes = deps.v2Schemes ?? {};
  const payTo = v2PayToOf(deps);
  const kinds = (['sui', 'solana'] as const).flatMap((chain) => {
    const scheme = schemes[chain];
    const to = payTo(chain);
    const verifier = deps.verifiers[chain];
    if (!scheme || !to || !verifier || verifier.network !== scheme.network) return [];
    // The same template an item carries, for any amount.
    const entry = v2Template(
      {
        chain,
        network: scheme.network,
        assetId: USDC_ASSET_BY_CHAIN[chain],
        splits: [{ recipientType: 'platform', payTo: to, amount: 1n }],
      },
      schemes,
      payTo,
    );
    if (!entry) return [];
    const { amount: _amount, maxTimeoutSeconds: _timeout, ...kind } = entry;
    return [{ x402Version: 2 as const, ...kind }];
  });
  const specChains = (['sui', 'solana'] as const).flatMap((chain) => {
    const verifier = deps.verifiers[chain];
    const platform = chain === 'sui' ? deps.config.platformSuiAddress : deps.config.platformSolanaAddress;
    if (!verifier || !platform) return [];
    return [{ chain, network: verifier.network, asset: 'USDC', assetId: USDC_ASSET_BY_CHAIN[chain] }];
  });
  return {
    x402Version: 2,
    name: PLATFORM_NAME,
    description:
      'Paid API gateway: marketplace APIs and OpenAI-compatible inference, paid per request in USDC on Sui and Solana with x402.',
    url: base,
    discovery: `${base}/discovery/resources`,
    resources: items.slice(0, MANIFEST_MAX_RESOURCES).map((i) => i.resource),
    resourceCount: items.length,
    schemes: [...new Set(kinds.map((k) => k.scheme))],
    networks: kinds.map((k) => k.network),
    kinds,
    extensions: {
      tollgate: {
        info: {
          spec: {
            x402Version: 1,
            schemes: ['exact_split', 'exact'],
            paymentHeader: 'X-PAYMENT',
            responseHeader: 'X-PAYMENT-RESPONSE',
            chains: specChains,
            description:
              'Every paid route also answers the SPEC format: the 402 body lists per-chain options with splits (provider and platform) and a memo; pay them in one transaction and retry with X-PAYMENT.',
          },
          directory: `${base}/v1/directory/apis`,
          models: `${base}/v1/models`,
          pricing: `${base}/v1/pricing`,
        },
      },
    },
  };
}
