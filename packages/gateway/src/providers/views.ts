/**
 * What the provider API shows back. Amounts are decimal strings; origin secrets
 * never appear (only `secretLast4`); rails show the operator-chosen platform
 * recipient and USDC asset.
 */
import { formatAmount, USDC_DECIMALS, USDC_SOLANA_MINT, USDC_SUI_COIN_TYPE } from '@tollgate/protocol';
import type { Config } from '../config.ts';
import type { Api, Chain, Endpoint, Project, Rail } from '../store/store.ts';
import { platformFee } from './fee.ts';
import { originAuthView } from './origin-auth.ts';

type ViewConfig = Pick<
  Config,
  'publicBaseUrl' | 'feeBps' | 'feeMin' | 'platformSuiAddress' | 'platformSolanaAddress'
>;

export function projectView(p: Project) {
  return {
    id: p.id,
    slug: p.slug,
    name: p.name,
    description: p.description,
    category: p.category,
    owner: { chain: p.owner.chain, address: p.owner.address },
    x402Exact: p.x402Exact,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  };
}

export function apiView(a: Api) {
  return {
    id: a.id,
    name: a.name,
    baseUrl: a.baseUrl,
    auth: originAuthView(a),
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  };
}

export function protectedUrl(config: Pick<Config, 'publicBaseUrl'>, slug: string, path: string): string {
  return `${config.publicBaseUrl}/p/${slug}/${path}`;
}

/** Price, platform fee and their total as decimal USDC strings. */
export function pricing(config: Pick<Config, 'feeBps' | 'feeMin'>, price: bigint) {
  const fee = platformFee(price, config);
  return {
    price: formatAmount(price, USDC_DECIMALS),
    fee: formatAmount(fee, USDC_DECIMALS),
    total: formatAmount(price + fee, USDC_DECIMALS),
  };
}

export function endpointView(config: ViewConfig, slug: string, e: Endpoint) {
  return {
    id: e.id,
    apiId: e.apiId,
    method: e.method,
    path: e.path,
    endpointType: e.endpointType,
    protectedUrl: protectedUrl(config, slug, e.path),
    ...pricing(config, e.price),
    asset: 'USDC' as const,
    description: e.description,
    timeoutMs: e.timeoutMs,
    enabled: e.enabled,
    inputSchema: e.inputSchema ?? null,
    outputSchema: e.outputSchema ?? null,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
}

export function railAsset(chain: Chain) {
  return chain === 'sui'
    ? { symbol: 'USDC' as const, decimals: USDC_DECIMALS, coinType: USDC_SUI_COIN_TYPE }
    : { symbol: 'USDC' as const, decimals: USDC_DECIMALS, mint: USDC_SOLANA_MINT };
}

export function platformRecipient(config: ViewConfig, chain: Chain): string | null {
  return chain === 'sui' ? config.platformSuiAddress : config.platformSolanaAddress;
}

export function railView(config: ViewConfig, r: Rail) {
  return {
    chain: r.chain,
    network: r.network,
    providerRecipient: r.providerRecipient,
    platformRecipient: platformRecipient(config, r.chain),
    asset: railAsset(r.chain),
    updatedAt: r.updatedAt,
  };
}
