/**
 * The server half of x402's `exact` scheme on Solana, as small as @x402/core needs it
 * to build a 402: price "$0.01" → atomic USDC on the mainnet mint, plus the
 * facilitator's fee payer in `extra` (what @x402/svm's ExactSvmScheme server does).
 * @x402/svm is not installed here; only the pieces a 402 touches are reproduced,
 * so the measured cost is @x402/core + @x402/express's own.
 */
import type { AssetAmount, Network, PaymentRequirements, Price, SchemeNetworkServer } from '@x402/core/types';

export const SOLANA_MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
export const USDC_MINT = 'EPjFWdd5AufqSSqeM2qFBdt1ZM6ppCsuzxEDkspApPV';
const DECIMALS = 6;

function toAtomic(decimal: string): string {
  const m = /^\$?\s*(\d+)(?:\.(\d+))?$/.exec(decimal.trim());
  if (!m) throw new Error(`unsupported price ${decimal}`);
  const frac = (m[2] ?? '').padEnd(DECIMALS, '0');
  if (frac.length > DECIMALS) throw new Error(`price ${decimal} has more than ${DECIMALS} decimals`);
  return (BigInt(m[1]!) * 10n ** BigInt(DECIMALS) + BigInt(frac)).toString();
}

type SupportedKind = Parameters<SchemeNetworkServer['enhancePaymentRequirements']>[1];

export class ExactSvmServer implements SchemeNetworkServer {
  readonly scheme = 'exact';
  readonly defaultAssetTransferMethod = 'default';
  readonly paymentFlows = {
    default: { supported: ['authorization'] as const, default: 'authorization' as const },
  };

  async parsePrice(price: Price, _network: Network): Promise<AssetAmount> {
    if (typeof price === 'object' && price !== null) return price;
    return { amount: toAtomic(String(price)), asset: USDC_MINT, extra: {} };
  }

  getAssetDecimals(): number {
    return DECIMALS;
  }

  async enhancePaymentRequirements(
    requirements: PaymentRequirements,
    supportedKind: SupportedKind,
    _facilitatorExtensions: string[],
  ): Promise<PaymentRequirements> {
    const feePayer = (supportedKind.extra as { feePayer?: unknown } | undefined)?.feePayer;
    return {
      ...requirements,
      extra: { ...requirements.extra, ...(typeof feePayer === 'string' ? { feePayer } : {}) },
    };
  }
}
