/**
 * x402 v2 wire format (DESIGN §4.12), beside the SPEC (v1) format: the
 * `PAYMENT-REQUIRED` header of a 402, the `PAYMENT-SIGNATURE` request header and
 * the `PAYMENT-RESPONSE` receipt, each base64 JSON. Field names follow the x402 v2
 * specification, so stock clients (`@x402/fetch`, `@x402/axios`) read and write them.
 */
import { z } from 'zod';
import { decodeBase64Json, encodeBase64Json } from './base64-json.ts';
import { ProtocolError } from './errors.ts';
import { SOLANA_MAINNET_GENESIS_HASH, SUI_MAINNET_CHAIN_ID } from './types.ts';

/** x402 v2 `ResourceInfo`. */
export interface V2Resource {
  url: string;
  description?: string;
  mimeType?: string;
}

/** x402 v2 `PaymentRequirements`: one entry of `accepts`. */
export interface V2Requirements {
  scheme: string;
  /** CAIP-2: `solana:<first 32 characters of the genesis hash>`, `sui:mainnet`. */
  network: string;
  /** Atomic units, integer string. */
  amount: string;
  /** Solana: the mint. Sui: the coin type. */
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: Record<string, unknown>;
}

export interface V2PaymentRequired {
  x402Version: 2;
  error?: string;
  resource: V2Resource;
  accepts: V2Requirements[];
  extensions?: Record<string, unknown>;
}

export interface V2PaymentPayload {
  x402Version: 2;
  resource?: V2Resource;
  /** The chosen `accepts` entry, echoed back as it was offered. */
  accepted: V2Requirements;
  /** Scheme-specific. Solana `exact`: `{ transaction }` (base64 wire transaction, partially signed). */
  payload: Record<string, unknown>;
  extensions?: Record<string, unknown>;
}

export interface V2SettleResponse {
  success: boolean;
  errorReason?: string;
  errorMessage?: string;
  payer?: string;
  transaction: string;
  network: string;
  amount?: string;
}

/** Request header carrying a v2 payment. */
export const PAYMENT_SIGNATURE_HEADER = 'payment-signature';
/** 402 header carrying the v2 requirement. */
export const PAYMENT_REQUIRED_HEADER = 'payment-required';
/** Response header carrying the v2 receipt. */
export const PAYMENT_RESPONSE_HEADER = 'payment-response';

/** A v2 payment carries a whole transaction: larger than a v1 proof, still bounded. */
const MAX_PAYLOAD_BYTES = 16 * 1024;

const atomic = z.string().regex(/^(0|[1-9][0-9]{0,24})$/, 'atomic integer amount');
const text = (max: number) => z.string().min(1).max(max);

const requirementsSchema = z.object({
  scheme: text(32),
  network: text(128),
  amount: atomic,
  asset: text(300),
  payTo: text(300),
  maxTimeoutSeconds: z.number().int().min(0).max(86_400),
  extra: z.record(z.string(), z.unknown()),
});

const resourceSchema = z.looseObject({
  url: text(4096),
  description: z.string().max(4096).optional(),
  mimeType: z.string().max(256).optional(),
});

const paymentPayloadSchema = z.object({
  x402Version: z.literal(2),
  resource: resourceSchema.optional(),
  accepted: requirementsSchema,
  payload: z.record(z.string(), z.unknown()),
  extensions: z.record(z.string(), z.unknown()).optional(),
});

/** Decodes a `PAYMENT-SIGNATURE` header; anything malformed is a ProtocolError `invalid_payment_header`. */
export function decodePaymentSignature(header: unknown): V2PaymentPayload {
  const value = decodeBase64Json(header, MAX_PAYLOAD_BYTES, 'invalid_payment_header');
  const parsed = paymentPayloadSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'payload';
    throw new ProtocolError('invalid_payment_header', `${where}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data as V2PaymentPayload;
}

export function encodePaymentSignature(payload: V2PaymentPayload): string {
  return encodeBase64Json(payload);
}

export function encodePaymentRequired(required: V2PaymentRequired): string {
  return encodeBase64Json(required);
}

export function decodePaymentRequired(header: unknown): V2PaymentRequired {
  const value = decodeBase64Json(header, 64 * 1024, 'invalid_requirement') as V2PaymentRequired;
  if (value.x402Version !== 2 || !Array.isArray(value.accepts)) {
    throw new ProtocolError('invalid_requirement', 'not an x402 v2 PaymentRequired');
  }
  return value;
}

export function encodeSettleResponse(r: V2SettleResponse): string {
  return encodeBase64Json(r);
}

export function decodeSettleResponse(header: unknown): V2SettleResponse {
  return decodeBase64Json(header, 8 * 1024, 'invalid_payment_header') as V2SettleResponse;
}

/** CAIP-2 id of a Solana cluster: `solana:` and the first 32 characters of its genesis hash. */
export function solanaCaip2(genesisHash: string): string {
  return `solana:${genesisHash.slice(0, 32)}`;
}

/** CAIP-2 id of a Sui network: `sui:mainnet` for mainnet's chain id, else `sui:<chain id>`. */
export function suiCaip2(chainId: string): string {
  return chainId === SUI_MAINNET_CHAIN_ID ? 'sui:mainnet' : `sui:${chainId}`;
}

export const SOLANA_MAINNET_CAIP2 = solanaCaip2(SOLANA_MAINNET_GENESIS_HASH);
