/** Listed projects for the web directory tests, published into a harness's store. */
import { randomBytes } from 'node:crypto';
import { newSolanaKey, newSuiKey } from '@tollgate/sandbox';
import { publishProject } from '../../src/marketplace/publish.ts';
import type { Chain } from '../../src/store/store.ts';
import type { Harness } from '../support/gateway-harness.ts';

export interface ListedSpec {
  slugPrefix: string;
  name: string;
  description?: string;
  category: string;
  x402Exact?: boolean;
  chains?: Chain[];
  endpoints: { method: string; path: string; price: string; description?: string }[];
}

/** Publishes a project with rails on `chains` (default both) through the store; returns its slug. */
export async function publishListed(h: Harness, spec: ListedSpec): Promise<string> {
  const slug = `${spec.slugPrefix}-${randomBytes(3).toString('hex')}`;
  const chains = spec.chains ?? ['solana', 'sui'];
  await publishProject(h.store, {
    slug,
    name: spec.name,
    description: spec.description ?? '',
    category: spec.category,
    owner: { chain: 'solana', address: newSolanaKey().address },
    ...(spec.x402Exact !== undefined ? { x402Exact: spec.x402Exact } : {}),
    api: { name: 'origin', baseUrl: `${h.upstream.url}/base` },
    endpoints: spec.endpoints.map((e) => ({ ...e, timeoutMs: 2000 })),
    rails: chains.map((chain) => ({
      chain,
      network: h.config.chainNetwork,
      providerRecipient: chain === 'solana' ? newSolanaKey().address : newSuiKey().address,
    })),
  });
  return slug;
}
