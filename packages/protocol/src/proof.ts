/** The X-PAYMENT proof: encode, decode (strict), build from a requirement. */
import { decodeBase64Json, encodeBase64Json } from './base64-json.ts';
import { ProtocolError } from './errors.ts';
import { paymentProofSchema, paymentReceiptSchema } from './schemas.ts';
import type { AcceptOption, PaymentProof, PaymentReceipt, PaymentRequirement } from './types.ts';

/** Largest X-PAYMENT header accepted, in decoded bytes. Real proofs are ~1 KB. */
export const MAX_PROOF_BYTES = 8 * 1024;

/**
 * Encodes a proof for the `X-PAYMENT` header.
 * @example
 * headers['X-PAYMENT'] = encodePaymentProof(buildPaymentProof(req, option, { payer, txHashOrDigest }));
 */
export function encodePaymentProof(proof: PaymentProof): string {
  return encodeBase64Json(proof);
}

/**
 * Decodes and validates an `X-PAYMENT` header. Throws only `ProtocolError` with
 * code `invalid_payment_header`, whatever the input.
 */
export function decodePaymentProof(header: unknown): PaymentProof {
  const value = decodeBase64Json(header, MAX_PROOF_BYTES, 'invalid_payment_header');
  const parsed = paymentProofSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'proof';
    throw new ProtocolError('invalid_payment_header', `${where}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data as PaymentProof;
}

/**
 * Builds the proof for a paid retry from the 402 body and the option that was paid.
 * @example
 * const option = selectPaymentOption(requirement, 'solana');
 * const tx = await wallet.pay(option);
 * const proof = buildPaymentProof(requirement, option, { payer: wallet.address, txHashOrDigest: tx });
 */
export function buildPaymentProof(
  requirement: PaymentRequirement,
  option: AcceptOption,
  paid: { payer: string; txHashOrDigest: string },
): PaymentProof {
  return {
    x402Version: 1,
    scheme: requirement.scheme,
    chain: option.chain,
    network: option.network,
    asset: option.asset,
    payer: paid.payer,
    txHashOrDigest: paid.txHashOrDigest,
    paymentRequirementId: requirement.paymentRequirementId,
    nonce: requirement.nonce,
    requestHash: requirement.requestHash,
    expiresAt: requirement.expiresAt,
  };
}

export function encodePaymentReceipt(receipt: PaymentReceipt): string {
  return encodeBase64Json(receipt);
}

/** Decodes an `X-PAYMENT-RESPONSE` header. Throws ProtocolError('invalid_payment_header'). */
export function decodePaymentReceipt(header: unknown): PaymentReceipt {
  const value = decodeBase64Json(header, MAX_PROOF_BYTES, 'invalid_payment_header');
  const parsed = paymentReceiptSchema.safeParse(value);
  if (!parsed.success) throw new ProtocolError('invalid_payment_header', 'malformed payment receipt');
  return parsed.data as PaymentReceipt;
}
