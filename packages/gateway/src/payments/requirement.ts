/**
 * Issuing a payment requirement (the 402 body). Writes nothing: everything the
 * retry needs travels in the signed paymentRequirementId.
 */
import {
  type AcceptOption,
  type Cost,
  computeRequestHash,
  formatAmount,
  memoForNonce,
  type PaymentRequirement,
  requestHasher,
  USDC_DECIMALS,
} from '@tollgate/protocol';
import { randomText } from '../crypto/random-pool.ts';
import type { QuotedOption, RequirementClaims, RequirementTokens } from './requirement-token.ts';

/** The request being priced, as the gateway received it. */
export interface RequestFacts {
  method: string;
  /** Path and query exactly as received. */
  pathWithQuery: string;
  bodySha256: string;
}

export interface Quote {
  scheme: 'exact_split' | 'exact';
  subject: string;
  resource: string;
  description: string;
  price: bigint;
  fee: bigint;
  /** Options without memo; the memo is derived from the nonce at issue time. */
  options: Omit<QuotedOption, 'memo'>[];
  cost?: Cost;
  /** Whether stock x402 v2 clients may pay it too (`exact`, the whole amount to the platform). */
  v2?: boolean;
}

export function quoteTotal(q: Pick<Quote, 'price' | 'fee'>): bigint {
  return q.price + q.fee;
}

export function toAcceptOption(o: QuotedOption): AcceptOption {
  const total = o.splits.reduce((sum, s) => sum + s.amount, 0n);
  return {
    chain: o.chain,
    network: o.network,
    asset: 'USDC',
    totalAmount: formatAmount(total, USDC_DECIMALS),
    decimals: USDC_DECIMALS,
    ...(o.chain === 'sui' ? { coinType: o.assetId } : { mint: o.assetId }),
    splits: o.splits.map((s) => ({
      recipientType: s.recipientType,
      payTo: s.payTo,
      amount: formatAmount(s.amount, USDC_DECIMALS),
    })),
    memo: o.memo,
  };
}

/** Quoted options are already in the hash's shape (asset is always "USDC" on the wire). */
const hashAccept = (o: Omit<QuotedOption, 'memo'>) => ({
  chain: o.chain,
  network: o.network,
  asset: 'USDC',
  splits: o.splits,
});

/**
 * The request hash for a request under a set of claims: what a retry is checked against.
 * issueRequirement computes the same hash through its quote's requestHasher (the quote's
 * fields written once); requirement.test.ts checks that the two agree.
 */
export function requestHashFor(claims: Omit<RequirementClaims, 'requestHash'>, req: RequestFacts): string {
  return computeRequestHash({
    scheme: claims.scheme,
    method: req.method,
    path: req.pathWithQuery,
    bodySha256: req.bodySha256,
    price: claims.price,
    fee: claims.fee,
    accepts: claims.options.map(hashAccept),
    nonce: claims.nonce,
    expiresAt: new Date(claims.expiresAtMs).toISOString(),
  });
}

/** Accept options without their memo, formatted once per quote (a cached quote serves many 402s). */
const formatted = new WeakMap<Quote['options'], Omit<AcceptOption, 'memo'>[]>();
function acceptsOf(quote: Quote, memo: string): AcceptOption[] {
  let base = formatted.get(quote.options);
  if (!base) {
    base = quote.options.map((o) => {
      const { memo: _unused, ...rest } = toAcceptOption({ ...o, memo: '' });
      return rest;
    });
    formatted.set(quote.options, base);
  }
  return base.map((a) => ({ ...a, memo }));
}

/** A 128-bit nonce (crypto/random-pool.ts: one randomFillSync per 4 KB of them and of the ids). */
export function newNonce(): string {
  return randomText(16, 'base64url');
}

/**
 * `new Date(ms).toISOString()`, with the part up to the seconds made once per second (the
 * 402's expiry; requirement.test.ts compares the two).
 */
let isoSecond = Number.NaN;
let isoSecondPrefix = '';
/** `000Z` to `999Z`, made once: no number is written per 402 (decimal.ts says why that matters). */
const MILLIS_Z = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(3, '0')}Z`);
export function isoTime(ms: number): string {
  if (!Number.isInteger(ms)) return new Date(ms).toISOString();
  const milli = ((ms % 1000) + 1000) % 1000;
  const second = ms - milli;
  if (second !== isoSecond) {
    const iso = new Date(second).toISOString();
    isoSecondPrefix = iso.slice(0, -4);
    isoSecond = second;
  }
  return `${isoSecondPrefix}${MILLIS_Z[milli]}`;
}

/**
 * A 402's requirement: the claims signed into its token, the token, and the body's JSON head.
 * The body as an object is made only for a 402 that adds a reason to it (requirementBody):
 * every other one is sent from the JSON head.
 */
export interface IssuedRequirement {
  claims: RequirementClaims;
  /** The signed token (requirement-token.ts). */
  paymentRequirementId: string;
  /** The expiry in ISO 8601, as the body writes it. */
  expiresAt: string;
  /**
   * The body's JSON without its closing brace, spliced from the quote's fixed parts:
   * requirementJson adds the request id and closes it.
   */
  jsonHead: string;
  /** jsonHead's length in UTF-8 bytes, known without reading it whole (requirementJson). */
  jsonHeadBytes: number;
}

/** The body of a requirement issueRequirement issued under `quote`, as an object (its JSON is jsonHead's). */
export function requirementBody(quote: Quote, issued: IssuedRequirement): PaymentRequirement {
  const { claims } = issued;
  return {
    error: 'payment_required',
    x402Version: 1,
    scheme: quote.scheme,
    resource: quote.resource,
    description: quote.description,
    expiresAt: issued.expiresAt,
    nonce: claims.nonce,
    requestHash: claims.requestHash,
    paymentRequirementId: issued.paymentRequirementId,
    accepts: acceptsOf(quote, memoForNonce(claims.nonce)),
    ...(quote.cost ? { cost: quote.cost } : {}),
  };
}

export function issueRequirement(
  tokens: RequirementTokens,
  quote: Quote,
  req: RequestFacts,
  nowMs: number,
  ttlSec: number,
): IssuedRequirement {
  const t = templateOf(quote);
  const nonce = newNonce();
  const memo = memoForNonce(nonce);
  const expiresAtMs = nowMs + ttlSec * 1000;
  const expiresAt = isoTime(expiresAtMs);
  // The same hash as requestHashFor(claims, req) (the retry's), with the quote's part written once.
  const requestHash = t.requestHash({
    method: req.method,
    path: req.pathWithQuery,
    bodySha256: req.bodySha256,
    nonce,
    expiresAt,
  });
  const claims: RequirementClaims = {
    scheme: quote.scheme,
    subject: quote.subject,
    nonce,
    issuedAtMs: nowMs,
    expiresAtMs,
    price: quote.price,
    fee: quote.fee,
    options: quote.options.map((o) => ({ ...o, memo })),
    ...(quote.v2 ? { v2: true } : {}),
    requestHash,
  };
  const paymentRequirementId = tokens.sign(claims, quote.options);
  const jsonHead = spliceHead(t, expiresAt, nonce, requestHash, paymentRequirementId, memo);
  // Each value spliced in is ASCII, one byte a character: only the quote's parts need counting,
  // and they were, once (requirement.test.ts checks the sum against the bytes).
  const jsonHeadBytes =
    t.fixedBytes +
    expiresAt.length +
    nonce.length +
    requestHash.length +
    paymentRequirementId.length +
    memo.length * t.options.length;
  return { claims, paymentRequirementId, expiresAt, jsonHead, jsonHeadBytes };
}

/**
 * The body's JSON, spliced from the quote's fixed parts, without the closing brace (the
 * response adds requestId). The values put in need no JSON escaping, so they are quoted as
 * they are: the nonce is base64url, the memo `tollgate:v1:` and the nonce, the request hash
 * hex, the expiry ISO 8601, the token `r2.<hex kid>.<base64url>.<base64url>.<base64url>`
 * (requirement.test.ts checks the whole body against JSON.stringify).
 */
function spliceHead(
  t: Template,
  expiresAt: string,
  nonce: string,
  requestHash: string,
  paymentRequirementId: string,
  memo: string,
): string {
  let accepts = '';
  for (let i = 0; i < t.options.length; i++) accepts += `${i ? ',' : ''}${t.options[i]}"${memo}"}`;
  return (
    `${t.head}"${expiresAt}","nonce":"${nonce}","requestHash":"${requestHash}"` +
    `,"paymentRequirementId":"${paymentRequirementId}","accepts":[${accepts}]${t.tail}`
  );
}

const str = JSON.stringify;

/**
 * The JSON of `{ ...body, requestId }` from the body's jsonHead (IssuedRequirement), equal to
 * JSON.stringify of that object byte for byte, and its length in UTF-8 bytes (the 402's
 * Content-Length) from jsonHeadBytes: the text is not read whole to count it, which would copy
 * it once more than writing it does, and the id's JSON is written once for both
 * (requirement.test.ts).
 */
export function requirementJson(
  jsonHead: string,
  jsonHeadBytes: number,
  requestId: string,
): { json: string; bytes: number } {
  const id = str(requestId);
  return {
    json: `${jsonHead},"requestId":${id}}`,
    bytes: jsonHeadBytes + REQUEST_ID_KEY_BYTES + Buffer.byteLength(id),
  };
}

const REQUEST_ID_KEY_BYTES = Buffer.byteLength(',"requestId":}');

/** A quote's fixed JSON parts, in the body's key order (one per quote, like the accept options). */
interface Template {
  /** From `{` to `"expiresAt":`. */
  head: string;
  /** Each accept option's JSON up to `"memo":` (memo is its last key). */
  options: string[];
  /** `,"cost":{...}` or ''. */
  tail: string;
  /** The UTF-8 bytes of a head spliced with every value empty: the quote's part of its length. */
  fixedBytes: number;
  /** The quote's request hash function (the quote's fields written once). */
  requestHash: ReturnType<typeof requestHasher>;
}
const templates = new WeakMap<Quote, Template>();
function templateOf(quote: Quote): Template {
  let t = templates.get(quote);
  if (!t) {
    const head = str({
      error: 'payment_required',
      x402Version: 1,
      scheme: quote.scheme,
      resource: quote.resource,
      description: quote.description,
    });
    const options = acceptsOf(quote, '').map((a) => {
      const json = str(a);
      const cut = json.lastIndexOf('"memo":');
      return json.slice(0, cut + '"memo":'.length);
    });
    t = {
      head: `${head.slice(0, -1)},"expiresAt":`,
      options,
      tail: quote.cost ? `,"cost":${str(quote.cost)}` : '',
      fixedBytes: 0,
      requestHash: requestHasher({
        scheme: quote.scheme,
        price: quote.price,
        fee: quote.fee,
        accepts: quote.options.map(hashAccept),
      }),
    };
    // Counted through spliceHead itself, with the same object every 402 passes it.
    t.fixedBytes = Buffer.byteLength(spliceHead(t, '', '', '', '', ''));
    templates.set(quote, t);
  }
  return t;
}
