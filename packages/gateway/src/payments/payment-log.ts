/**
 * What settlement learns about a request's payment, for the request's one access-log
 * line (http/access-log.ts writes it once the response is done). The route hands
 * settlement the request's object (AdmitInput.log); settlement and the paid request
 * fill it in as they go. Only identifiers that are public on-chain or ours: never the
 * proof, the PAYMENT-SIGNATURE payload or the requirement token.
 */
import type { PaymentRef } from './paid-request.ts';

export interface PaymentLog {
  /** v1: an `X-PAYMENT` proof (SPEC); v2: a `PAYMENT-SIGNATURE` (x402 v2). */
  format?: 'v1' | 'v2' | undefined;
  chain?: string | undefined;
  /** The payment's transaction (Solana signature, Sui digest). */
  tx?: string | undefined;
  payer?: string | undefined;
  /** USDC atomic units (1 USDC = 1000000): the sum of the paid option's splits. */
  amount?: string | undefined;
  /** The redemption row that holds the payment. */
  redemption?: string | undefined;
  /** Why a payment was refused or held, or why a paid attempt did not deliver. */
  reason?: string | undefined;
  /** How a paid request ended. */
  outcome?: 'delivered' | 'replayed' | 'failed' | 'abandoned' | 'not_settled' | undefined;
}

/** Notes the payment a request carries, once its transaction is known. */
export function notePayment(log: PaymentLog | undefined, ref: PaymentRef): void {
  if (!log) return;
  log.format = ref.version === 2 ? 'v2' : 'v1';
  log.chain = ref.chain;
  log.tx = ref.txId;
  log.payer = ref.payer;
  log.amount = paidAmount(ref).toString();
}

/** The whole amount of the paid option, atomic units. */
export function paidAmount(ref: Pick<PaymentRef, 'option'>): bigint {
  let sum = 0n;
  for (const s of ref.option.splits) sum += s.amount;
  return sum;
}
