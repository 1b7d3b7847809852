/**
 * The bench's project, seeded into a gateway's store: "bench", whose API is the bench
 * upstream, sold per request:
 *   GET paid  0.01 USDC (the 402 and paid scenarios)
 *   GET free  0        (no payment: forwarded directly)
 *   GET big   0        (256 KB streamed)
 * Used by the bench's gateway process (gateway.ts) and by the 402 anatomy (bench/anatomy.ts).
 */
import type { Config } from '../../packages/gateway/src/config.ts';
import type { Catalog } from '../../packages/gateway/src/marketplace/catalog.ts';
import { publishProject } from '../../packages/gateway/src/marketplace/publish.ts';
import type { Store } from '../../packages/gateway/src/store/store.ts';

export const BENCH_SLUG = 'bench';

export async function seedBenchProject(
  store: Store,
  catalog: Catalog,
  config: Config,
  o: { upstreamUrl: string; providerSolana: string; providerSui?: string | undefined },
): Promise<void> {
  await publishProject(store, {
    slug: BENCH_SLUG,
    name: 'Bench API',
    description: 'the bench upstream, sold per request',
    category: 'bench',
    owner: { chain: 'solana', address: o.providerSolana },
    api: { name: 'bench upstream', baseUrl: o.upstreamUrl },
    endpoints: [
      { method: 'GET', path: 'paid', price: '0.01' },
      { method: 'GET', path: 'free', price: '0' },
      { method: 'GET', path: 'big', price: '0' },
    ],
    rails: [
      { chain: 'solana', network: config.chainNetwork, providerRecipient: o.providerSolana },
      ...(o.providerSui
        ? [{ chain: 'sui' as const, network: config.chainNetwork, providerRecipient: o.providerSui }]
        : []),
    ],
  });
  catalog.invalidate(BENCH_SLUG);
}
