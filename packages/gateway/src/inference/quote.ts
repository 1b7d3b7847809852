/**
 * Prices an inference call as an x402 `exact` quote: one `platform` split per chain
 * whose amount is the inference price plus the platform fee (DESIGN §4.10).
 */
import { formatAmount, USDC_DECIMALS } from '@tollgate/protocol';
import type { ChainId, ChainVerifier } from '../chains/chain.ts';
import type { Config } from '../config.ts';
import { platformAddress, USDC_ASSET } from '../marketplace/quote.ts';
import type { Quote } from '../payments/requirement.ts';
import type { QuotedOption } from '../payments/requirement-token.ts';
import { platformFee } from '../providers/fee.ts';

/** Chains offered, in the same stable order as the marketplace (sui, solana). */
const CHAINS: readonly ChainId[] = ['sui', 'solana'];

/** One option per chain that has a platform address and a verifier right now. */
export function platformOptions(
  config: Readonly<Config>,
  verifiers: Partial<Record<ChainId, ChainVerifier>>,
  amount: bigint,
): Omit<QuotedOption, 'memo'>[] {
  const options: Omit<QuotedOption, 'memo'>[] = [];
  for (const chain of CHAINS) {
    const payTo = platformAddress(config, chain);
    const verifier = verifiers[chain];
    if (!payTo || !verifier) continue;
    options.push({
      chain,
      network: verifier.network,
      assetId: USDC_ASSET[chain],
      splits: amount > 0n ? [{ recipientType: 'platform', payTo, amount }] : [],
    });
  }
  return options;
}

export interface InferenceQuoteInput {
  /** `inf:chat:<model>`, `inf:embeddings:<model>` or `inf:conv:<id>`: a proof only works for its subject. */
  subject: string;
  /** `POST /v1/chat/completions` etc. */
  resource: string;
  description: string;
  price: bigint;
  pricingSourceVersion: string;
}

export function inferenceQuote(
  input: InferenceQuoteInput,
  config: Readonly<Config>,
  verifiers: Partial<Record<ChainId, ChainVerifier>>,
): Quote {
  const fee = platformFee(input.price, config);
  const usdc = (a: bigint) => ({ amount: formatAmount(a, USDC_DECIMALS), asset: 'USDC' });
  return {
    scheme: 'exact',
    subject: input.subject,
    resource: input.resource,
    description: input.description,
    price: input.price,
    fee,
    options: platformOptions(config, verifiers, input.price + fee),
    // The platform is the only payee: a stock x402 v2 client can pay it as it is.
    v2: true,
    cost: {
      inference: usdc(input.price),
      platformFee: usdc(fee),
      total: usdc(input.price + fee),
      pricingSourceVersion: input.pricingSourceVersion,
    },
  };
}
