/**
 * The x402 receipts a payer gets for a paid request: v1's `X-PAYMENT-RESPONSE` body
 * (SPEC §2) and v2's `PAYMENT-RESPONSE` (a settle response). One builder per version, so
 * the receipt in a payer's history (`GET /v1/me/payments`) is the object the answer's
 * header carried, field for field.
 */
import type { PaymentReceipt, V2SettleResponse } from '@tollgate/protocol';
import type { Chain } from '../store/store.ts';

export function v1Receipt(p: {
  success: boolean;
  chain: Chain;
  network: string;
  txId: string;
  payer: string;
  requirementId: string;
}): PaymentReceipt {
  return {
    success: p.success,
    chain: p.chain,
    network: p.network,
    txHashOrDigest: p.txId,
    payer: p.payer,
    paymentRequirementId: p.requirementId,
  };
}

/** `network` is the CAIP-2 id; `amount` the whole amount paid, atomic units. */
export function v2Receipt(p: {
  success: boolean;
  txId: string;
  network: string;
  payer: string;
  amount: bigint | string;
  reason?: string;
}): V2SettleResponse {
  return {
    success: p.success,
    transaction: p.success ? p.txId : '',
    network: p.network,
    payer: p.payer,
    ...(p.success ? { amount: String(p.amount) } : { errorReason: p.reason ?? 'not_settled' }),
  };
}
