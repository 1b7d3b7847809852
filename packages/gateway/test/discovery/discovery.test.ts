/**
 * GET /discovery/resources and GET /.well-known/x402 on the real gateway (sandbox chains,
 * SQLite): what is listed (opted-in projects' enabled, priced endpoints and the inference
 * routes, only where a v2 scheme is configured), the item shape, paging, filters, the 400s.
 */
import { randomBytes } from 'node:crypto';
import {
  decodePaymentRequired,
  USDC_SOLANA_MINT,
  USDC_SUI_COIN_TYPE,
  type V2Requirements,
} from '@tollgate/protocol';
import { newSolanaKey, newSuiKey } from '@tollgate/sandbox';
import { validateDiscoveryExtension } from '@x402/extensions/bazaar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainId } from '../../src/chains/chain.ts';
import type { ExactV2Scheme } from '../../src/chains/exact-v2.ts';
import { DISCOVERY_TTL_MS, type DiscoveryItem, type DiscoveryPage } from '../../src/marketplace/discovery.ts';
import { publishProject } from '../../src/marketplace/publish.ts';
import type { V2Schemes } from '../../src/payments/v2-offer.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

/** Discovery reads only chain, network, caip2 and extra(); check/settle are never called here. */
function fakeScheme(chain: ChainId, network: string, caip2: string, feePayer?: string): ExactV2Scheme {
  return {
    chain,
    network,
    caip2,
    extra: (memo) => (feePayer ? { feePayer, memo } : { memo }),
    check: async () => ({ ok: false, reason: 'unused', message: 'not in this test' }),
    settle: async () => ({ ok: false, reason: 'unused', message: 'not in this test' }),
  };
}

let h: Harness;
/** The harness gateway's own v2 schemes (the Solana sponsor, Sui exact) and what they advertise. */
let realSchemes: V2Schemes;
let SOLANA_CAIP2: string;
let SUI_CAIP2: string;
let FEE_PAYER: string;

let clock = 0;
/** Moves the gateway clock past the discovery and catalogue caches. */
const fresh = () => {
  clock += DISCOVERY_TTL_MS + 1000;
  h.setClockOffset(clock);
};

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
async function get(path: string): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${h.baseUrl}${path}`);
  return { status: res.status, body: await res.json(), headers: res.headers };
}
const list = async (query = ''): Promise<DiscoveryPage> => {
  const r = await get(`/discovery/resources${query}`);
  expect(r.status).toBe(200);
  return r.body as DiscoveryPage;
};

/** Resources are named under PUBLIC_BASE_URL, not the loopback address the test talks to. */
const publicBase = () => h.config.publicBaseUrl.replace(/\/+$/, '');

let second: { slug: string };
let optedOut: { slug: string };

beforeAll(async () => {
  h = await startHarness();
  realSchemes = h.deps.v2Schemes!;
  SOLANA_CAIP2 = realSchemes.solana!.caip2;
  SUI_CAIP2 = realSchemes.sui!.caip2;
  FEE_PAYER = h.sponsor.address;
  await h.store.projects.update(h.project.id, { x402Exact: true });
  const owner = { chain: 'sui' as const, address: newSuiKey().address };
  const rails = (p: { sui: string; solana: string }) => [
    { chain: 'sui' as const, network: h.config.chainNetwork, providerRecipient: p.sui },
    { chain: 'solana' as const, network: h.config.chainNetwork, providerRecipient: p.solana },
  ];
  // A second opted-in project with more endpoints (paging), in another category.
  const s = await publishProject(h.store, {
    slug: `maps-${randomBytes(3).toString('hex')}`,
    name: 'Maps & Tiles',
    category: 'geo',
    owner,
    api: { name: 'maps', baseUrl: `${h.upstream.url}/base` },
    endpoints: Array.from({ length: 7 }, (_, i) => ({
      method: 'GET',
      path: `tiles/${i}`,
      price: `0.00${i + 1}`,
    })),
    rails: rails({ sui: newSuiKey().address, solana: newSolanaKey().address }),
  });
  await h.store.projects.update(s.project.id, { x402Exact: true });
  second = { slug: s.project.slug };
  // A project that did not opt in: only the SPEC format can pay it.
  const o = await publishProject(h.store, {
    slug: `spec-only-${randomBytes(3).toString('hex')}`,
    name: 'Spec only',
    category: 'geo',
    owner,
    api: { name: 'spec', baseUrl: `${h.upstream.url}/base` },
    endpoints: [{ method: 'GET', path: 'x', price: '0.01' }],
    rails: rails({ sui: newSuiKey().address, solana: newSolanaKey().address }),
  });
  optedOut = { slug: o.project.slug };
  await h.store.endpoints.update(h.project.id, h.endpoints.orders.id, {
    inputSchema: {
      type: 'object',
      properties: { sku: { type: 'string' }, quantity: { type: 'integer', minimum: 1 } },
      required: ['sku', 'quantity'],
    },
    outputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
  });
});
afterAll(async () => {
  await h?.close();
});

describe('with no v2 scheme configured', () => {
  it('lists nothing: no stock client could pay', async () => {
    h.deps.v2Schemes = {};
    try {
      fresh();
      const body = await list();
      expect(body).toEqual({ x402Version: 2, items: [], pagination: { limit: 20, offset: 0, total: 0 } });
      const manifest = await get('/.well-known/x402');
      expect(manifest.body).toMatchObject({ resources: [], resourceCount: 0, kinds: [], networks: [] });
    } finally {
      h.deps.v2Schemes = realSchemes;
    }
  });
});

describe('with the v2 schemes configured', () => {
  beforeAll(() => {
    // v2 payments go to the platform's configured address, as on the 402 path.
    expect(h.deps.v2PayTo?.('solana')).toBe(h.recipients.solana.platform);
    fresh();
  });

  it('lists the inference routes, then opted-in projects’ enabled priced endpoints, in a stable order', async () => {
    const body = await list('?limit=100');
    const base = publicBase();
    const shop = `${base}/p/${h.project.slug}`;
    expect(body.items.map((i) => i.resource)).toEqual([
      `${base}/v1/chat/completions`,
      `${base}/v1/embeddings`,
      ...[`${shop}/big`, `${shop}/free`, `${shop}/items`, `${shop}/orders/new`]
        .concat(Array.from({ length: 7 }, (_, i) => `${base}/p/${second.slug}/tiles/${i}`))
        .sort(),
    ]);
    expect(body.pagination).toEqual({ limit: 100, offset: 0, total: 13 });
    // Not listed: the disabled endpoint, the project that did not opt in.
    const urls = body.items.map((i) => i.resource).join('\n');
    expect(urls).not.toContain(`/p/${h.project.slug}/off`);
    expect(urls).not.toContain(optedOut.slug);
    expect(body.x402Version).toBe(2);
  });

  it('an endpoint item: accepts templates on both chains, metadata, schemas and the bazaar extension', async () => {
    const { items } = await list('?limit=100');
    const item = items.find((i) => i.resource.endsWith('/orders/new'))!;
    const endpoint = (await h.store.endpoints.byId(h.project.id, h.endpoints.orders.id))!;
    // 0.02 + 10% fee (0.002) = 0.022 USDC, all to the platform: the stock client pays one payTo.
    expect(item.accepts).toEqual([
      {
        scheme: 'exact',
        network: SUI_CAIP2,
        amount: '22000',
        asset: USDC_SUI_COIN_TYPE,
        payTo: h.recipients.sui.platform,
        maxTimeoutSeconds: 60,
        extra: {},
      },
      {
        scheme: 'exact',
        network: SOLANA_CAIP2,
        amount: '22000',
        asset: USDC_SOLANA_MINT,
        payTo: h.recipients.solana.platform,
        maxTimeoutSeconds: 60,
        // The fee payer is there; the memo and paymentRequirementId come only with a real 402.
        extra: { feePayer: FEE_PAYER },
      },
    ]);
    expect(item).toMatchObject({
      type: 'http',
      x402Version: 2,
      lastUpdated: new Date(endpoint.updatedAt).toISOString(),
      description: 'POST orders/new',
      mimeType: 'application/json',
      serviceName: 'Test shop',
      tags: ['test'],
      metadata: {
        category: 'test',
        provider: h.project.slug,
        providerName: 'Test shop',
        method: 'POST',
        path: `/p/${h.project.slug}/orders/new`,
        priceUsdc: '0.022',
        pricing: { basis: 'per_request', currency: 'USDC', price: '0.02', fee: '0.002', total: '0.022' },
        schemes: ['exact'],
        networks: [SUI_CAIP2, SOLANA_CAIP2],
        chains: ['sui', 'solana'],
        inputSchema: endpoint.inputSchema,
        outputSchema: endpoint.outputSchema,
        available: true,
      },
    });
    expect(Date.parse(item.lastUpdated)).toBeGreaterThanOrEqual(Date.parse(endpoint.updatedAt));
    const bazaar = item.extensions!.bazaar;
    expect(bazaar.info.input).toEqual({
      type: 'http',
      method: 'POST',
      bodyType: 'json',
      body: { sku: 'string', quantity: 1 },
    });
    expect(validateDiscoveryExtension(bazaar as never)).toEqual({ valid: true });
    // No schemas given: no schema keys in metadata, a GET extension without queryParams.
    const items2 = items.find((i) => i.resource.endsWith('/items'))!;
    expect(items2.metadata).not.toHaveProperty('inputSchema');
    expect(items2.extensions!.bazaar.info.input).toEqual({ type: 'http', method: 'GET' });
    // The "free" endpoint still costs the platform fee (0.001), so it is a paid resource.
    expect(items.find((i) => i.resource.endsWith('/free'))!.accepts[0]!.amount).toBe('1000');
  });

  it('an item is what a real 402 for that resource carries, but for the per-request extra', async () => {
    const { items } = await list('?limit=100');
    for (const [path, init] of [
      [
        'orders/new',
        { method: 'POST', body: '{"sku":"A","quantity":1}', headers: { 'content-type': 'application/json' } },
      ],
      ['items', {}],
    ] as const) {
      const item = items.find((i) => i.resource.endsWith(`/p/${h.project.slug}/${path}`))!;
      const res = await fetch(`${h.baseUrl}/p/${h.project.slug}/${path}`, init);
      expect(res.status).toBe(402);
      const required = decodePaymentRequired(res.headers.get('payment-required'));
      expect(required.resource.url).toBe(item.resource);
      const strip = ({ extra, ...rest }: V2Requirements) => {
        const { memo: _m, paymentRequirementId: _t, ...kept } = extra;
        return { ...rest, extra: kept };
      };
      expect(required.accepts.map(strip)).toEqual(item.accepts);
      expect(required.extensions?.['bazaar']).toEqual(item.extensions!.bazaar);
    }
  });

  it('the inference items: a reference amount and every model’s per-token prices', async () => {
    const { items } = await list('?provider=tollgate');
    expect(items.map((i) => i.metadata.path)).toEqual(['/v1/chat/completions', '/v1/embeddings']);
    const [chat, embeddings] = items as [DiscoveryItem, DiscoveryItem];
    // 1000 prompt tokens × 0.000001 + 256 (default cap) × 0.000002 = 0.001512; fee = max(10%, 0.001).
    expect(chat.accepts.map((a) => a.amount)).toEqual(['2512', '2512']);
    expect(chat.metadata).toMatchObject({
      category: 'inference',
      provider: 'tollgate',
      method: 'POST',
      priceUsdc: '0.002512',
      pricing: {
        basis: 'per_token',
        reference: {
          model: 'tollgate-dev-chat',
          promptTokens: 1000,
          completionTokens: 256,
          price: '0.001512',
          fee: '0.001',
          total: '0.002512',
        },
        platformFee: { feeBps: 1000, feeMin: '0.001' },
        table: `${publicBase()}/v1/pricing`,
        models: [
          {
            id: 'tollgate-dev-chat',
            prompt: '0.000001',
            completion: '0.000002',
            promptPerMillion: '1',
            completionPerMillion: '2',
            defaultMaxTokens: 256,
          },
        ],
      },
    });
    expect(chat.lastUpdated).toBe('2026-11-22T00:00:00.000Z');
    expect(chat.metadata.inputSchema).toMatchObject({ required: ['model', 'messages'] });
    expect(chat.extensions!.bazaar.info.input).toMatchObject({
      method: 'POST',
      body: { model: 'tollgate-dev-chat' },
    });
    // 1000 × 0.00000002 = 0.00002, + fee 0.001.
    expect(embeddings.metadata.priceUsdc).toBe('0.00102');
    expect(embeddings.metadata.pricing).toMatchObject({
      reference: { model: 'universal-sentence-encoder-lite', promptTokens: 1000 },
    });
    expect(embeddings.metadata.pricing.reference).not.toHaveProperty('completionTokens');
    for (const item of items) {
      expect(validateDiscoveryExtension(item.extensions!.bazaar as never)).toEqual({ valid: true });
    }
  });

  it('pages without overlap or gaps, with the total on every page', async () => {
    const all = (await list('?limit=100')).items.map((i) => i.resource);
    const seen: string[] = [];
    for (let offset = 0; offset < all.length + 5; offset += 5) {
      const page = await list(`?limit=5&offset=${offset}`);
      expect(page.pagination).toEqual({ limit: 5, offset, total: all.length });
      expect(page.items.length).toBe(Math.max(0, Math.min(5, all.length - offset)));
      seen.push(...page.items.map((i) => i.resource));
    }
    expect(seen).toEqual(all);
    // Defaults: limit 20, offset 0.
    expect((await list()).pagination).toEqual({ limit: 20, offset: 0, total: all.length });
    // Past the end: empty, same total.
    expect(await list('?offset=1000')).toMatchObject({ items: [], pagination: { total: all.length } });
  });

  it('filters: type, provider (slug, name, metadata[provider]), category, network, scheme, payTo, extensions', async () => {
    const count = async (q: string) => (await list(q)).pagination.total;
    expect(await count('?type=http')).toBe(13);
    expect(await count('?type=mcp')).toBe(0);
    expect(await count(`?provider=${second.slug}`)).toBe(7);
    expect(await count(`?metadata[provider]=${second.slug}`)).toBe(7);
    expect(await count(`?metadata%5Bprovider%5D=${h.project.slug}`)).toBe(4);
    expect(await count(`?provider=${encodeURIComponent('maps & tiles')}`)).toBe(7);
    expect(await count(`?provider=${optedOut.slug}`)).toBe(0);
    expect(await count('?category=geo')).toBe(7);
    expect(await count('?metadata[category]=inference')).toBe(2);
    expect(await count(`?network=${encodeURIComponent(SUI_CAIP2)}`)).toBe(13);
    expect(await count('?network=eip155:8453')).toBe(0);
    expect(await count('?scheme=exact')).toBe(13);
    expect(await count('?scheme=exact_split')).toBe(0);
    expect(await count(`?payTo=${h.recipients.solana.platform}`)).toBe(13);
    expect(await count(`?payTo=${newSolanaKey().address}`)).toBe(0);
    expect(await count('?extensions=bazaar')).toBe(13);
    expect(await count('?extensions=sign-in-with-x')).toBe(0);
    // A name on Object.prototype is no extension.
    expect(await count('?extensions=constructor')).toBe(0);
    expect(await count('?extensions=toString')).toBe(0);
    // Combined: AND; paging applies after filtering.
    const page = await list(`?category=geo&provider=${second.slug}&limit=3&offset=6`);
    expect(page.pagination).toEqual({ limit: 3, offset: 6, total: 7 });
    expect(page.items.map((i) => i.metadata.path)).toEqual([`/p/${second.slug}/tiles/6`]);
  });

  it('invalid queries are 400 invalid_request, never 500', async () => {
    for (const q of [
      'limit=0',
      'limit=101',
      'limit=-1',
      'limit=abc',
      'limit=1.5',
      'offset=-1',
      'offset=x',
      'offset=99999999999',
      'limit=1&limit=2', // repeated
      'type=http&type=http',
      'provider=a&provider=b',
      'type=',
      'unknown=1',
      `provider=${'a'.repeat(101)}`,
      'provider=%00',
      `provider=${second.slug}&metadata[provider]=other`,
    ]) {
      const r = await get(`/discovery/resources?${q}`);
      expect({ q, status: r.status, error: r.body.error }).toEqual({
        q,
        status: 400,
        error: 'invalid_request',
      });
      expect(r.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('is cacheable for a few seconds', async () => {
    const r = await get('/discovery/resources');
    expect(r.headers.get('cache-control')).toBe('public, max-age=10');
  });

  it('follows the catalogue: disabling an endpoint or opting out removes items, unhealthy ones stay marked', async () => {
    await h.store.endpoints.update(h.project.id, h.endpoints.big.id, { enabled: false });
    for (let i = 0; i < 10; i++) h.deps.health.recordFailure(h.endpoints.items.id, h.project.slug);
    fresh();
    let body = await list(`?provider=${h.project.slug}`);
    expect(body.items.map((i) => i.metadata.path.split('/').slice(3).join('/'))).toEqual([
      'free',
      'items',
      'orders/new',
    ]);
    expect(body.items.find((i) => i.resource.endsWith('/items'))!.metadata.available).toBe(false);

    await h.store.projects.update(h.project.id, { x402Exact: false });
    fresh();
    body = await list(`?provider=${h.project.slug}`);
    expect(body.pagination.total).toBe(0);
    expect((await list()).pagination.total).toBe(9);

    await h.store.projects.update(h.project.id, { x402Exact: true });
    await h.store.endpoints.update(h.project.id, h.endpoints.big.id, { enabled: true });
    fresh();
    expect((await list(`?provider=${h.project.slug}`)).pagination.total).toBe(4);
  });

  it('a chain with no v2 scheme is left out of accepts; an item with no payable chain is left out', async () => {
    const schemes = h.deps.v2Schemes;
    h.deps.v2Schemes = { sui: schemes!.sui! };
    fresh();
    const { items } = await list('?limit=100');
    expect(items.length).toBe(13);
    for (const i of items) {
      expect(i.accepts.map((a) => a.network)).toEqual([SUI_CAIP2]);
      expect(i.metadata.chains).toEqual(['sui']);
    }
    // A scheme for another network label (e.g. mainnet) is not used.
    h.deps.v2Schemes = { sui: fakeScheme('sui', 'mainnet', 'sui:mainnet') };
    fresh();
    expect((await list()).pagination.total).toBe(0);
    // No payee configured: nothing either.
    h.deps.v2Schemes = schemes;
    const payTo = h.deps.v2PayTo;
    h.deps.v2PayTo = () => null;
    fresh();
    expect((await list()).pagination.total).toBe(0);
    if (payTo) h.deps.v2PayTo = payTo;
    else delete h.deps.v2PayTo;
    fresh();
    expect((await list()).pagination.total).toBe(13);
  });
});

describe('when the store fails', () => {
  it('serves the last list rather than an error, and rebuilds once it is back', async () => {
    fresh();
    const before = await list('?limit=100');
    expect(before.pagination.total).toBe(13); // endpoints listed: the store is read on a rebuild
    const listListed = h.store.projects.listListed;
    h.store.projects.listListed = async () => {
      throw new Error('database unavailable');
    };
    try {
      fresh();
      expect(await list('?limit=100')).toEqual(before);
    } finally {
      h.store.projects.listListed = listListed;
    }
    fresh();
    expect(await list('?limit=100')).toEqual(before);
  });
});

describe('GET /.well-known/x402', () => {
  it('names the discovery endpoint, the resources, the v2 kinds and the SPEC format', async () => {
    fresh();
    const r = await get('/.well-known/x402');
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('public, max-age=10');
    const all = (await list('?limit=100')).items.map((i) => i.resource);
    const base = publicBase();
    expect(r.body).toEqual({
      x402Version: 2,
      name: 'Tollgate',
      description: expect.any(String),
      url: base,
      discovery: `${base}/discovery/resources`,
      resources: all,
      resourceCount: all.length,
      schemes: ['exact'],
      networks: [SUI_CAIP2, SOLANA_CAIP2],
      kinds: [
        {
          x402Version: 2,
          scheme: 'exact',
          network: SUI_CAIP2,
          asset: USDC_SUI_COIN_TYPE,
          payTo: h.recipients.sui.platform,
          extra: {},
        },
        {
          x402Version: 2,
          scheme: 'exact',
          network: SOLANA_CAIP2,
          asset: USDC_SOLANA_MINT,
          payTo: h.recipients.solana.platform,
          extra: { feePayer: FEE_PAYER },
        },
      ],
      extensions: {
        tollgate: {
          info: {
            spec: {
              x402Version: 1,
              schemes: ['exact_split', 'exact'],
              paymentHeader: 'X-PAYMENT',
              responseHeader: 'X-PAYMENT-RESPONSE',
              chains: [
                { chain: 'sui', network: 'localnet', asset: 'USDC', assetId: USDC_SUI_COIN_TYPE },
                { chain: 'solana', network: 'localnet', asset: 'USDC', assetId: USDC_SOLANA_MINT },
              ],
              description: expect.any(String),
            },
            directory: `${base}/v1/directory/apis`,
            models: `${base}/v1/models`,
            pricing: `${base}/v1/pricing`,
          },
        },
      },
    });
  });
});
