/**
 * Header rules for forwarding (DESIGN §4.9, SPEC §4.2 rules 6–9).
 * Request side: strip payment, session, x-service-*, x-tollgate-*, hop-by-hop and client-sent
 * forwarding headers, then add ours (the payment context among them) and the origin auth
 * (which therefore always wins).
 * Response side: strip hop-by-hop, headers that would act on the gateway's own domain, and
 * the gateway's own headers (request id, receipts, x-tollgate-*), whatever their case.
 */

export type OriginAuth =
  | { type: 'none' }
  | { type: 'bearer'; secret: string }
  | { type: 'header'; name: string; secret: string }
  | { type: 'query'; name: string; secret: string };

export type ClientHeaders = Record<string, string | string[] | undefined>;

/** RFC 9110 §7.6.1 plus the legacy proxy ones. */
const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

const DROP_REQUEST = new Set([
  ...HOP_BY_HOP,
  'x-payment', // the proof is ours, not the provider's
  'payment-signature', // the x402 v2 payment: a signed transaction, not the provider's either
  'authorization', // gateway session credentials
  'cookie',
  'host', // undici sets it from the origin
  'content-length', // undici recomputes it from the body buffer
  'forwarded',
  'x-real-ip',
  'x-request-id', // replaced by ours
  'expect', // the body is already buffered; undici refuses 100-continue anyway
  'http2-settings',
]);

/**
 * The gateway serves every provider from one shared domain, so an origin must not be able
 * to set cookies there (session fixation / tossing), clear its storage, pin or redirect
 * its transport, or speak for the gateway: its request id, its payment receipt and 402
 * headers (x402 v1 and v2 names) and every `x-tollgate-*` header (GATEWAY_PREFIX) are the
 * gateway's alone (some of them also mark stored responses, e.g. not-retained).
 */
const DROP_RESPONSE = new Set([
  ...HOP_BY_HOP,
  'set-cookie',
  'set-cookie2',
  'clear-site-data',
  'alt-svc',
  'strict-transport-security',
  'public-key-pins',
  'x-request-id',
  'x-payment-response',
  'payment-response',
  'payment-required',
]);

/** Headers under this (lower-case) prefix are the gateway's own; an origin never sets them. */
const GATEWAY_PREFIX = 'x-tollgate-';

export interface ForwardingContext {
  clientIp: string;
  forwardedProto: string;
  forwardedHost: string;
  requestId: string;
  userAgent: string | undefined;
  hasBody: boolean;
  auth: OriginAuth;
  /** The gateway's own `x-tollgate-*` headers for this request (the payment context), flat pairs. */
  gatewayHeaders?: readonly string[];
}

/** Flat `[name, value, …]` list for undici (no intermediate object). */
export function buildRequestHeaders(client: ClientHeaders, ctx: ForwardingContext): string[] {
  const out: string[] = [];
  const nominated = connectionTokens(client.connection);
  const authHeader = ctx.auth.type === 'header' ? ctx.auth.name.toLowerCase() : null;
  let hasContentType = false;
  let hasUserAgent = false;

  for (const name in client) {
    const value = client[name];
    if (value === undefined) continue;
    const key = name.toLowerCase();
    if (DROP_REQUEST.has(key) || key === authHeader) continue;
    if (key.startsWith('x-service-') || key.startsWith('x-forwarded-') || key.charCodeAt(0) === 58 /* : */) {
      continue;
    }
    // The gateway's own names (the signed payment context): a client must not forge them.
    if (key.startsWith(GATEWAY_PREFIX)) continue;
    if (nominated?.has(key)) continue;
    if (key === 'content-type') hasContentType = true;
    else if (key === 'user-agent') hasUserAgent = true;
    if (typeof value === 'string') out.push(key, value);
    else for (const v of value) out.push(key, v); // repeated header lines stay repeated
  }

  // SPEC §4.2 rule 9: bodies are JSON unless the client said otherwise; bytes are never touched.
  if (ctx.hasBody && !hasContentType) out.push('content-type', 'application/json');
  if (!hasUserAgent && ctx.userAgent) out.push('user-agent', ctx.userAgent);
  out.push('x-forwarded-for', ctx.clientIp);
  if (ctx.forwardedProto) out.push('x-forwarded-proto', ctx.forwardedProto);
  if (ctx.forwardedHost) out.push('x-forwarded-host', ctx.forwardedHost);
  out.push('x-request-id', ctx.requestId);
  if (ctx.gatewayHeaders) out.push(...ctx.gatewayHeaders);

  if (ctx.auth.type === 'bearer') out.push('authorization', `Bearer ${ctx.auth.secret}`);
  else if (ctx.auth.type === 'header') out.push(authHeader!, ctx.auth.secret);
  return out;
}

export type ResponseHeaders = Record<string, string | string[]>;

export function filterResponseHeaders(
  upstream: Record<string, string | string[] | undefined>,
): ResponseHeaders {
  const out: ResponseHeaders = {};
  const nominated = connectionTokens(upstream.connection);
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined) continue;
    const key = name.toLowerCase();
    if (DROP_RESPONSE.has(key) || key.startsWith(GATEWAY_PREFIX) || nominated?.has(key)) continue;
    out[key] = value;
  }
  return out;
}

/** Header names listed in a Connection header: hop-by-hop by declaration. */
function connectionTokens(value: string | string[] | undefined): Set<string> | null {
  if (value === undefined) return null;
  const text = Array.isArray(value) ? value.join(',') : value;
  let set: Set<string> | null = null;
  for (const token of text.split(',')) {
    const t = token.trim().toLowerCase();
    if (t === '' || t === 'close' || t === 'keep-alive') continue;
    set ??= new Set();
    set.add(t);
  }
  return set;
}
