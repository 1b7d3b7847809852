/**
 * The minimal 402 server: the leanest reasonable node:http server doing the work a 402 of
 * this design requires (DESIGN §4.3), with none of the gateway's framework, catalogue,
 * settlement, metrics or logging. It is the 402 scenario's third yardstick: the bare server
 * shows what Node costs to answer these bytes, @x402/express what the stock middleware
 * costs, this what the 402's own work costs on the same machine, so the gap between it and
 * the gateway is the gateway's own.
 *
 * Per request, as the gateway: a fresh 128-bit nonce (pooled getrandom, as
 * payments/requirement.ts), its memo, the expiry (now + the gateway's TTL) in ISO 8601; the
 * requestHash over this request (method, path with query, the empty body's SHA-256) and the
 * quote (`requestHasher` from @tollgate/protocol, the quote's part written once); the
 * `paymentRequirementId` signed with the gateway's own key and code (requirement-token.ts's
 * `createRequirementTokens` over `deriveKey(secret, 'requirement-token/v1')`); a request id
 * `req_<uuid>`; the body spliced into the quote's JSON text, made once; the gateway's 402
 * headers.
 *
 * The quote comes from a 402 the gateway answered (BENCH_402_FILE: its body, stable headers
 * and request path, written by the bench): scheme, resource, description, accept options and
 * cost from the body; the price (the provider splits) and fee (the platform split) parsed
 * from its amounts; the subject and TTL, which the body does not show, from its token, which
 * must verify with BENCH_TOKEN_SECRET. At start it checks that the captured 402 is rebuilt
 * byte for byte from these parts and its values, and that the quote recomputes its hash.
 * Not a product: one quote for every path, no x402 v2 entries, no client request ids.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AcceptOption,
  EMPTY_BODY_SHA256,
  memoForNonce,
  type PaymentRequirement,
  parseAmount,
  requestHasher,
  USDC_DECIMALS,
} from '@tollgate/protocol';
import { deriveKey } from '../../packages/gateway/src/crypto/keys.ts';
import { isoTime, newNonce } from '../../packages/gateway/src/payments/requirement.ts';
import {
  createRequirementTokens,
  type QuotedOption,
  type RequirementClaims,
} from '../../packages/gateway/src/payments/requirement-token.ts';
import { announce, exitOnSignal } from './announce.ts';

const env = (k: string): string => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is required`);
  return v;
};

interface Captured {
  /** The gateway's 402 body, as sent. */
  body: string;
  /** Its headers without the per-connection ones (base-servers.ts stableHeaders). */
  headers: Record<string, string>;
  /** The path (with query) it answered. */
  path: string;
}
const captured = JSON.parse(readFileSync(env('BENCH_402_FILE'), 'utf8')) as Captured;
const sample = JSON.parse(captured.body) as PaymentRequirement & { requestId: string };
const tokens = createRequirementTokens([deriveKey(env('BENCH_TOKEN_SECRET'), 'requirement-token/v1')]);

// ---- the quote, once ----
const sampleToken = tokens.verify(sample.paymentRequirementId);
if (!sampleToken.ok) throw new Error(`the captured 402's token does not verify: ${sampleToken.reason}`);
const { subject } = sampleToken.claims;
const ttlMs = sampleToken.claims.expiresAtMs - sampleToken.claims.issuedAtMs;
if (sampleToken.claims.v2 || captured.headers['payment-required'] !== undefined)
  throw new Error('the captured 402 offers x402 v2 entries, which this server does not make');

const atomic = (amount: string) => parseAmount(amount, USDC_DECIMALS);
const total = (a: AcceptOption, type: 'provider' | 'platform') =>
  a.splits.reduce((sum, s) => (s.recipientType === type ? sum + atomic(s.amount) : sum), 0n);
// Provider splits add up to the price, the platform split is the fee (marketplace/quote.ts).
const price = total(sample.accepts[0]!, 'provider');
const fee = total(sample.accepts[0]!, 'platform');
const options: Omit<QuotedOption, 'memo'>[] = sample.accepts.map((a) => {
  if (total(a, 'provider') !== price || total(a, 'platform') !== fee)
    throw new Error('the captured accept options do not all carry the same price and fee');
  return {
    chain: a.chain,
    network: a.network,
    assetId: (a.chain === 'sui' ? a.coinType : a.mint) as string,
    splits: a.splits.map((s) => ({
      recipientType: s.recipientType,
      payTo: s.payTo,
      amount: atomic(s.amount),
    })),
  };
});
const hashRequest = requestHasher({
  scheme: sample.scheme,
  price,
  fee,
  accepts: sample.accepts.map((a, i) => ({
    chain: a.chain,
    network: a.network,
    asset: a.asset,
    splits: options[i]!.splits,
  })),
});

// The body's JSON text around the per-request values, in the gateway's key order.
const str = JSON.stringify;
const head = `${str({
  error: sample.error,
  x402Version: sample.x402Version,
  scheme: sample.scheme,
  resource: sample.resource,
  description: sample.description,
}).slice(0, -1)},"expiresAt":"`;
const acceptHeads = sample.accepts.map((a) => {
  const json = str(a);
  const cut = json.lastIndexOf('"memo":');
  if (cut < 0 || json.slice(cut) !== `"memo":${str(a.memo)}}`)
    throw new Error('the captured accept options do not end with their memo');
  return json.slice(0, cut + '"memo":"'.length);
});
const tail = sample.cost === undefined ? '' : `,"cost":${str(sample.cost)}`;

function bodyOf(
  expiresAt: string,
  nonce: string,
  memo: string,
  requestHash: string,
  token: string,
  requestId: string,
): string {
  let accepts = '';
  for (let i = 0; i < acceptHeads.length; i++) accepts += `${i ? ',' : ''}${acceptHeads[i]}${memo}"}`;
  // Nothing spliced in needs JSON escaping: base64url, hex, ISO 8601, `r2.<kid>.<b64url>.<b64url>.<b64url>`, req_<uuid>.
  return (
    `${head}${expiresAt}","nonce":"${nonce}","requestHash":"${requestHash}"` +
    `,"paymentRequirementId":"${token}","accepts":[${accepts}]${tail},"requestId":"${requestId}"}`
  );
}

// The quote's parts are the gateway's: the captured 402 is rebuilt byte for byte from them.
const rebuilt = bodyOf(
  sample.expiresAt,
  sample.nonce,
  memoForNonce(sample.nonce),
  sample.requestHash,
  sample.paymentRequirementId,
  sample.requestId,
);
if (rebuilt !== captured.body) throw new Error(`the captured 402 is not rebuilt from its parts:\n${rebuilt}`);
const sampleHash = hashRequest({
  method: 'GET',
  path: captured.path,
  bodySha256: EMPTY_BODY_SHA256,
  nonce: sample.nonce,
  expiresAt: sample.expiresAt,
});
if (sampleHash !== sample.requestHash || sampleToken.claims.requestHash !== sample.requestHash)
  throw new Error('the quote parsed from the captured 402 does not give its requestHash');

// The gateway's header set: a new x-request-id, the captured rest, the length.
const { 'x-request-id': _sampleId, ...fixedHeaders } = captured.headers;

// ---- per request ----
const server = createServer((req, res) => {
  const nonce = newNonce();
  const memo = memoForNonce(nonce);
  const now = Date.now();
  const expiresAtMs = now + ttlMs;
  const expiresAt = isoTime(expiresAtMs);
  const requestHash = hashRequest({
    method: req.method as string,
    path: req.url as string,
    bodySha256: EMPTY_BODY_SHA256,
    nonce,
    expiresAt,
  });
  const claims: RequirementClaims = {
    scheme: sample.scheme,
    subject,
    nonce,
    issuedAtMs: now,
    expiresAtMs,
    price,
    fee,
    options: options.map((o) => ({ ...o, memo })),
    requestHash,
  };
  const token = tokens.sign(claims, options);
  const requestId = `req_${randomUUID()}`;
  const body = bodyOf(expiresAt, nonce, memo, requestHash, token, requestId);
  const bytes = Buffer.byteLength(body);
  res.writeHead(402, {
    'x-request-id': requestId,
    ...fixedHeaders,
    'content-length': String(bytes),
  });
  // As the gateway (fast-unpaid.ts): an ASCII text as Latin-1, which Node writes without flattening it.
  res.end(body, bytes === body.length ? 'latin1' : 'utf8');
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  announce({ port: (server.address() as AddressInfo).port, bodyBytes: captured.body.length });
});
exitOnSignal(() => new Promise((r) => server.close(r)));
