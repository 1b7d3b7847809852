/**
 * The x402 v2 side of a quote (DESIGN §4.12): which `exact` entries a stock v2 client
 * may pay, beside the SPEC options. A stock client pays one `payTo`, so the v2 entry
 * for a chain pays the whole amount to the platform; on the marketplace that is
 * offered only for projects that opted in (the provider's share becomes a payable).
 */
import {
  memoForNonce,
  type V2PaymentRequired,
  type V2Requirements,
  type V2Resource,
} from '@tollgate/protocol';
import type { ChainId } from '../chains/chain.ts';
import type { ExactV2Scheme } from '../chains/exact-v2.ts';
import type { QuotedOption, RequirementClaims } from './requirement-token.ts';

/** The v2 schemes configured now, by chain. */
export type V2Schemes = Partial<Record<ChainId, ExactV2Scheme>>;

/** Where the whole amount of a v2 payment goes, per chain (the platform's address). */
export type V2PayTo = (chain: ChainId) => string | null;

/** How long a v2 payer has to sign and send its payment (`maxTimeoutSeconds`). */
const MAX_TIMEOUT_SECONDS = 60;

/** The v2 entry a stock client pays for one quoted option, or null when that chain has no v2 scheme. */
export function v2EntryFor(
  option: Omit<QuotedOption, 'memo'>,
  nonce: string,
  token: string,
  schemes: V2Schemes,
  payTo: V2PayTo,
): V2Requirements | null {
  const scheme = schemes[option.chain];
  const to = payTo(option.chain);
  if (!scheme || !to || scheme.network !== option.network) return null;
  const amount = option.splits.reduce((sum, s) => sum + s.amount, 0n);
  if (amount === 0n) return null;
  return {
    scheme: 'exact',
    network: scheme.caip2,
    amount: amount.toString(),
    asset: option.assetId,
    payTo: to,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    // The stock client echoes `accepted` verbatim: the token travels back in it.
    extra: { ...scheme.extra(memoForNonce(nonce)), paymentRequirementId: token },
  };
}

/** The `PAYMENT-REQUIRED` object for a 402 whose claims allow v2, or null when no entry can be offered. */
export function v2PaymentRequired(
  claims: RequirementClaims,
  token: string,
  resource: V2Resource,
  schemes: V2Schemes,
  payTo: V2PayTo,
  extensions?: Record<string, unknown>,
): V2PaymentRequired | null {
  if (!claims.v2) return null;
  const accepts = claims.options
    .map((o) => v2EntryFor(o, claims.nonce, token, schemes, payTo))
    .filter((e): e is V2Requirements => e !== null);
  if (accepts.length === 0) return null;
  return {
    x402Version: 2,
    error: 'payment_required',
    resource,
    accepts,
    ...(extensions ? { extensions } : {}),
  };
}
