/**
 * Payment context for origins (issue 13): a paid request reaches the provider's origin
 * with who paid and how much in `X-Tollgate-*` headers, signed with the API's origin
 * secret (HMAC-SHA256) so the origin can trust them. The signature covers every context
 * value plus the request method and target, so a header set taken from one request does
 * not verify on another. docs/provider-api.md ("Payment context headers") shows the same
 * verification as a standalone snippet; keep the two in step.
 *
 * The gateway drops every `x-tollgate-*` header a client sends (proxy/forward-headers.ts),
 * so whatever the origin receives under these names came from the gateway.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { formatAmount, USDC_DECIMALS } from '@tollgate/protocol';

export const PAYMENT_CONTEXT_HEADERS = {
  payer: 'x-tollgate-payer',
  chain: 'x-tollgate-chain',
  network: 'x-tollgate-network',
  tx: 'x-tollgate-tx',
  amount: 'x-tollgate-amount',
  requirement: 'x-tollgate-requirement',
  timestamp: 'x-tollgate-timestamp',
  signature: 'x-tollgate-signature',
} as const;

/** First line of the signed text: names the format, so a later one can never be confused with it. */
const VERSION_LINE = 'tollgate-payment-context/v1';
/** Default freshness window of a verifier: the origin refuses older (or far future) timestamps. */
export const DEFAULT_MAX_AGE_SEC = 300;

export interface PaymentContext {
  payer: string;
  chain: string;
  network: string;
  /** Transaction id (Solana signature, Sui digest). */
  tx: string;
  /** Gross paid, atomic USDC units (sent as a decimal USDC string). */
  amount: bigint;
  /** The payment requirement id (`paymentRequirementId`) the payment answered. */
  requirement: string;
}

/** The request the context is bound to, as the origin receives it. */
export interface ContextRequest {
  method: string;
  /** The request target as sent to the origin: path and query (Node: `req.url`). */
  target: string;
}

/** The exact text that is signed: one value per line, in this order. */
export function canonicalPaymentContext(
  fields: Record<Exclude<keyof typeof PAYMENT_CONTEXT_HEADERS, 'signature'>, string>,
  req: ContextRequest,
): string {
  return [
    VERSION_LINE,
    fields.timestamp,
    req.method.toUpperCase(),
    req.target,
    fields.chain,
    fields.network,
    fields.tx,
    fields.payer,
    fields.amount,
    fields.requirement,
  ].join('\n');
}

const hmacHex = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('hex');

/**
 * The headers for one forwarded paid request, as a flat `[name, value, …]` list. With a
 * secret they carry `X-Tollgate-Signature: v1=<hex>`; without one (an API with no origin
 * auth) they are sent unsigned, as information the origin cannot verify.
 */
export function paymentContextHeaders(
  ctx: PaymentContext,
  req: ContextRequest,
  opts: { secret: string | null; nowMs: number },
): string[] {
  const fields = {
    payer: ctx.payer,
    chain: ctx.chain,
    network: ctx.network,
    tx: ctx.tx,
    amount: formatAmount(ctx.amount, USDC_DECIMALS),
    requirement: ctx.requirement,
    timestamp: String(Math.floor(opts.nowMs / 1000)),
  };
  const out: string[] = [];
  for (const key of Object.keys(fields) as (keyof typeof fields)[]) {
    out.push(PAYMENT_CONTEXT_HEADERS[key], fields[key]);
  }
  if (opts.secret !== null) {
    out.push(
      PAYMENT_CONTEXT_HEADERS.signature,
      `v1=${hmacHex(opts.secret, canonicalPaymentContext(fields, req))}`,
    );
  }
  return out;
}

export type VerifiedContext =
  | { ok: true; context: Omit<PaymentContext, 'amount'> & { amount: string; timestamp: number } }
  | { ok: false; reason: 'missing_header' | 'bad_signature' | 'stale_timestamp' };

/**
 * What an origin runs: recompute the signature over the received headers, method and
 * target with its secret, compare in constant time, and refuse a timestamp outside
 * `maxAgeSec` of now. `headers` as Node gives them (lower-case names).
 */
export function verifyPaymentContext(
  headers: Record<string, string | string[] | undefined>,
  req: ContextRequest,
  secret: string,
  opts: { nowMs?: number; maxAgeSec?: number } = {},
): VerifiedContext {
  const read = (name: string): string | null => {
    const v = headers[name];
    return typeof v === 'string' ? v : null;
  };
  const fields = {
    payer: read(PAYMENT_CONTEXT_HEADERS.payer),
    chain: read(PAYMENT_CONTEXT_HEADERS.chain),
    network: read(PAYMENT_CONTEXT_HEADERS.network),
    tx: read(PAYMENT_CONTEXT_HEADERS.tx),
    amount: read(PAYMENT_CONTEXT_HEADERS.amount),
    requirement: read(PAYMENT_CONTEXT_HEADERS.requirement),
    timestamp: read(PAYMENT_CONTEXT_HEADERS.timestamp),
  };
  const signature = read(PAYMENT_CONTEXT_HEADERS.signature);
  if (signature === null || Object.values(fields).some((v) => v === null)) {
    return { ok: false, reason: 'missing_header' };
  }
  const present = fields as Record<keyof typeof fields, string>;
  const expected = Buffer.from(`v1=${hmacHex(secret, canonicalPaymentContext(present, req))}`);
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: 'bad_signature' };
  }
  const timestamp = Number(present.timestamp);
  const nowSec = (opts.nowMs ?? Date.now()) / 1000;
  if (
    !Number.isSafeInteger(timestamp) ||
    Math.abs(nowSec - timestamp) > (opts.maxAgeSec ?? DEFAULT_MAX_AGE_SEC)
  ) {
    return { ok: false, reason: 'stale_timestamp' };
  }
  const { timestamp: _t, ...rest } = present;
  return { ok: true, context: { ...rest, timestamp } };
}
