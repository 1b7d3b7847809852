/** zod schemas of the wire types, shared by the gateway (proof) and the client (requirement). */
import { z } from 'zod';

const decimalAmount = z.string().regex(/^(0|[1-9][0-9]{0,14})(\.[0-9]{1,6})?$/, 'decimal amount');
const shortText = (max: number) => z.string().min(1).max(max);

export const chainSchema = z.enum(['sui', 'solana']);
export const schemeSchema = z.enum(['exact_split', 'exact']);

export const splitSchema = z.object({
  recipientType: z.enum(['provider', 'platform']),
  payTo: shortText(128),
  amount: decimalAmount,
});

export const acceptOptionSchema = z.object({
  chain: chainSchema,
  network: shortText(32),
  asset: z.literal('USDC'),
  totalAmount: decimalAmount,
  decimals: z.number().int().min(0).max(18),
  coinType: shortText(300).optional(),
  mint: shortText(64).optional(),
  splits: z.array(splitSchema).min(1).max(8),
  memo: shortText(128),
});

export const paymentRequirementSchema = z.looseObject({
  error: z.literal('payment_required'),
  x402Version: z.literal(1),
  scheme: schemeSchema,
  resource: z.string().max(4096),
  description: z.string().max(4096),
  expiresAt: z.iso.datetime(),
  nonce: shortText(128),
  requestHash: z.string().regex(/^[0-9a-f]{64}$/),
  paymentRequirementId: shortText(2048),
  accepts: z.array(acceptOptionSchema).max(8),
  cost: z.looseObject({}).optional(),
  reason: z.string().optional(),
});

/** Strict: unknown fields are rejected so a proof has exactly one meaning. */
export const paymentProofSchema = z.strictObject({
  x402Version: z.literal(1),
  scheme: schemeSchema,
  chain: chainSchema,
  network: shortText(32),
  asset: z.literal('USDC'),
  payer: shortText(128),
  txHashOrDigest: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,100}$/, 'base58 transaction id'),
  paymentRequirementId: shortText(2048),
  nonce: shortText(128),
  requestHash: z.string().regex(/^[0-9a-f]{64}$/),
  expiresAt: z.iso.datetime(),
});

export const paymentReceiptSchema = z.strictObject({
  success: z.boolean(),
  chain: chainSchema,
  network: shortText(32),
  txHashOrDigest: shortText(128),
  payer: shortText(128),
  paymentRequirementId: shortText(2048),
});
