/**
 * requestHash binds a payment to one exact request and one exact quote
 * (SPEC §2.6, DESIGN §4.3). Definition and test vectors: docs/request-hash.md.
 */
import { canonicalJson } from './canonical-json.ts';
import { sha256Hex } from './hash.ts';
import { jsonString } from './json-string.ts';
import type { Scheme } from './types.ts';

export interface RequestHashSplit {
  recipientType: 'provider' | 'platform';
  payTo: string;
  /** Atomic units, integer string ("10000" = 0.01 USDC) or bigint. */
  amount: string | bigint;
}

export interface RequestHashInput {
  scheme: Scheme;
  /** HTTP method; upper-cased before hashing. */
  method: string;
  /** Request path with its query string exactly as received, e.g. "/p/demo/weather?city=Oslo". */
  path: string;
  /** Lowercase hex SHA-256 of the raw body bytes (of the empty string when there is no body). */
  bodySha256: string;
  price: string | bigint;
  fee: string | bigint;
  accepts: { chain: string; network: string; asset: string; splits: RequestHashSplit[] }[];
  nonce: string;
  /** ISO 8601 UTC, exactly as in the requirement. */
  expiresAt: string;
}

const ATOMIC = /^(0|[1-9][0-9]*)$/;
const atomic = (v: string | bigint): string => {
  if (typeof v === 'bigint') {
    if (v < 0n) throw new TypeError(`not an atomic integer amount: ${v}`);
    return v.toString();
  }
  if (!ATOMIC.test(v)) throw new TypeError(`not an atomic integer amount: ${v}`);
  return v;
};
const str = JSON.stringify;

/** The fields of a request hash that a quote fixes: the same for every 402 of that quote. */
export type RequestHashQuoted = Pick<RequestHashInput, 'scheme' | 'price' | 'fee' | 'accepts'>;
/** The fields of a request hash that each request and each 402 set. */
export type RequestHashPerRequest = Pick<
  RequestHashInput,
  'method' | 'path' | 'bodySha256' | 'nonce' | 'expiresAt'
>;

/**
 * The preimage with a quote's fields written out once. Key by key in canonical (sorted)
 * order because this runs on every 402; request-hash.test.ts checks it equals
 * canonicalJson() of the same object.
 */
function preimageFor(q: RequestHashQuoted): (r: RequestHashPerRequest) => string {
  let accepts = '';
  for (const a of q.accepts) {
    let splits = '';
    for (const sp of a.splits) {
      splits += `${splits ? ',' : ''}{"amount":${str(atomic(sp.amount))},"payTo":${str(sp.payTo)},"recipientType":${str(sp.recipientType)}}`;
    }
    accepts += `${accepts ? ',' : ''}{"asset":${str(a.asset)},"chain":${str(a.chain)},"network":${str(a.network)},"splits":[${splits}]}`;
  }
  const head = `{"accepts":[${accepts}],`;
  const fee = `,"fee":${str(atomic(q.fee))},`;
  const tail = `,"price":${str(atomic(q.price))},"scheme":${str(q.scheme)},"v":1}`;
  // The request's fields: the body's hash and the method as last written when they repeat
  // (the empty body's hash and GET, on almost every 402), the rest through jsonString, whose
  // scan is cheaper than a call into V8's serializer for strings this short.
  let body = '';
  let bodyJson = '';
  let method = '';
  let methodJson = '';
  return (r) => {
    if (r.bodySha256 !== body) {
      bodyJson = jsonString(r.bodySha256.toLowerCase());
      body = r.bodySha256;
    }
    if (r.method !== method) {
      methodJson = jsonString(r.method.toUpperCase());
      method = r.method;
    }
    return (
      `${head}"bodySha256":${bodyJson},"expiresAt":${jsonString(r.expiresAt)}${fee}` +
      `"method":${methodJson},"nonce":${jsonString(r.nonce)},"path":${jsonString(r.path)}${tail}`
    );
  };
}

/** The exact string that is hashed: the RFC 8785 canonical JSON of the bound fields. */
export function requestHashPreimage(input: RequestHashInput): string {
  return preimageFor(input)(input);
}

/** The same preimage through the generic canonicaliser: the definition the fast path must match. */
export function requestHashPreimageCanonical(input: RequestHashInput): string {
  return canonicalJson({
    v: 1,
    scheme: input.scheme,
    method: input.method.toUpperCase(),
    path: input.path,
    bodySha256: input.bodySha256.toLowerCase(),
    price: atomic(input.price),
    fee: atomic(input.fee),
    accepts: input.accepts.map((a) => ({
      chain: a.chain,
      network: a.network,
      asset: a.asset,
      splits: a.splits.map((s) => ({
        recipientType: s.recipientType,
        payTo: s.payTo,
        amount: atomic(s.amount),
      })),
    })),
    nonce: input.nonce,
    expiresAt: input.expiresAt,
  });
}

/** Lowercase hex SHA-256 of the RFC 8785 canonical JSON of the bound fields. */
export function computeRequestHash(input: RequestHashInput): string {
  return sha256Hex(requestHashPreimage(input));
}

/**
 * computeRequestHash for many requests under one quote: the quote's part of the preimage
 * is written once. `requestHasher(q)(r) === computeRequestHash({ ...q, ...r })`.
 */
export function requestHasher(q: RequestHashQuoted): (r: RequestHashPerRequest) => string {
  const preimage = preimageFor(q);
  return (r) => sha256Hex(preimage(r));
}
