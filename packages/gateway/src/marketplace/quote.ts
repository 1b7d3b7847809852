/** Prices a marketplace endpoint: provider split = price, platform split = fee, per rail. */
import { formatAmount, USDC_DECIMALS, USDC_SOLANA_MINT, USDC_SUI_COIN_TYPE } from '@tollgate/protocol';
import type { ChainId, ChainVerifier } from '../chains/chain.ts';
import type { Config } from '../config.ts';
import type { Quote } from '../payments/requirement.ts';
import type { QuotedOption } from '../payments/requirement-token.ts';
import { platformFee } from '../providers/fee.ts';
import type { Endpoint, Rail } from '../store/store.ts';

export const USDC_ASSET: Record<ChainId, string> = { solana: USDC_SOLANA_MINT, sui: USDC_SUI_COIN_TYPE };

export function platformAddress(config: Readonly<Config>, chain: ChainId): string | null {
  return chain === 'sui' ? config.platformSuiAddress : config.platformSolanaAddress;
}

/** Accept options for the rails that can be paid and verified right now. */
export function railOptions(
  rails: readonly Rail[],
  config: Readonly<Config>,
  verifiers: Partial<Record<ChainId, ChainVerifier>>,
  price: bigint,
  fee: bigint,
): Omit<QuotedOption, 'memo'>[] {
  const options: Omit<QuotedOption, 'memo'>[] = [];
  for (const rail of rails) {
    const platform = platformAddress(config, rail.chain);
    const verifier = verifiers[rail.chain];
    if (!platform || !verifier || verifier.network !== rail.network) continue;
    const splits: QuotedOption['splits'] = [];
    if (price > 0n) splits.push({ recipientType: 'provider', payTo: rail.providerRecipient, amount: price });
    if (fee > 0n) splits.push({ recipientType: 'platform', payTo: platform, amount: fee });
    options.push({ chain: rail.chain, network: rail.network, assetId: USDC_ASSET[rail.chain], splits });
  }
  // Stable order (sui, solana) so the same endpoint always hashes the same way.
  return options.sort((a, b) => a.chain.localeCompare(b.chain) * -1);
}

/**
 * A catalogue snapshot's endpoint always has the same quote: cache it on the endpoint
 * object, so a 402 reuses its formatted parts. A reload keeps the object of an endpoint (and
 * the rails array) that did not change (catalog.ts), so the quote, and what is built once
 * per quote (the 402's template, the token's quote part), last until the provider edits it.
 */
const cached = new WeakMap<Endpoint, { rails: readonly Rail[]; quote: Quote }>();

export function marketplaceQuote(...args: Parameters<typeof buildQuote>): Quote {
  const [, endpoint, rails] = args;
  const hit = cached.get(endpoint);
  if (hit && hit.rails === rails) return hit.quote;
  const quote = buildQuote(...args);
  cached.set(endpoint, { rails, quote });
  return quote;
}

function buildQuote(
  slug: string,
  endpoint: Endpoint,
  rails: readonly Rail[],
  config: Readonly<Config>,
  verifiers: Partial<Record<ChainId, ChainVerifier>>,
): Quote {
  const fee = platformFee(endpoint.price, config);
  return {
    scheme: 'exact_split',
    subject: `ep:${endpoint.id}`,
    resource: `${endpoint.method} /p/${slug}/${endpoint.path}`,
    description: endpoint.description || `${endpoint.method} ${endpoint.path}`,
    price: endpoint.price,
    fee,
    options: railOptions(rails, config, verifiers, endpoint.price, fee),
    cost: {
      endpoint: { amount: formatAmount(endpoint.price, USDC_DECIMALS), asset: 'USDC' },
      platformFee: { amount: formatAmount(fee, USDC_DECIMALS), asset: 'USDC' },
      total: { amount: formatAmount(endpoint.price + fee, USDC_DECIMALS), asset: 'USDC' },
    },
  };
}
