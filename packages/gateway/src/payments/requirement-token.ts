/**
 * The `paymentRequirementId`: a token signed with HMAC-SHA-256 that carries the
 * whole quote, so issuing a 402 writes nothing and a retry is checked against
 * exactly what was quoted (DESIGN §4.3). The key id names the key that signed it, so the
 * secret can rotate.
 *
 * Format r2 (what sign writes): `r2.<kid>.<quote>.<issue>.<mac>`, each part base64url:
 * - quote: the JSON of what the quote fixes, `{"s":…,"u":…,"p":…,"f":…[,"x":1],"o":[…]}`,
 *   the same text for every 402 of one quote;
 * - issue: the JSON of what each 402 sets, `{"n":…,"h":…,"i":…,"e":…}`;
 * - mac: HMAC-SHA-256 under the key `kid` of `r2.<kid>.<digest>.<issue>`, where digest is
 *   the base64url SHA-256 of the quote part's text.
 * The MAC binds the quote through its digest (a different quote part with the same digest
 * would be a SHA-256 collision) and the 402's own fields directly: a 402 hashes about 330
 * bytes instead of the whole ~870-byte token, the quote's digest being made once per quote.
 * `.` is not a base64url character, so a token splits into its parts one way only.
 *
 * Format r1 (`r1.<kid>.<payload>.<mac>`: one JSON of every field, the MAC over
 * `r1.<kid>.<payload>`) is what sign wrote before; verify still reads it, so a token issued
 * before an upgrade is good for the rest of its life.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import { memoForNonce, USDC_SOLANA_MINT, USDC_SUI_COIN_TYPE } from '@tollgate/protocol';
import type { ChainId } from '../chains/chain.ts';
import { type HmacSha256, hmacSha256Base64url } from '../crypto/hmac.ts';
import type { DerivedKey } from '../crypto/keys.ts';
import { decimal } from '../decimal.ts';

export interface QuotedSplit {
  recipientType: 'provider' | 'platform';
  payTo: string;
  amount: bigint;
}

export interface QuotedOption {
  chain: ChainId;
  network: string;
  /** Solana mint or Sui coin type. */
  assetId: string;
  memo: string;
  splits: QuotedSplit[];
}

export interface RequirementClaims {
  scheme: 'exact_split' | 'exact';
  /** What was priced: `ep:<endpointId>` on the marketplace, `inf:<route>:<model>` on inference. */
  subject: string;
  nonce: string;
  /**
   * The requestHash of the one request this requirement was issued for. Signed in, so a
   * proof cannot be re-hashed for another query or body by whoever holds it (DESIGN §4.5).
   */
  requestHash: string;
  issuedAtMs: number;
  expiresAtMs: number;
  price: bigint;
  fee: bigint;
  options: QuotedOption[];
  /** True when x402 v2 `exact` entries were offered beside the SPEC options (DESIGN §4.12). */
  v2?: boolean;
}

/**
 * Compact wire form (the token travels in every X-PAYMENT). The memo is not stored:
 * it is derived from the nonce. The asset is omitted when it is the chain's USDC.
 */
type Wire = {
  s: 'exact_split' | 'exact';
  u: string;
  n: string;
  h: string;
  i: number;
  e: number;
  p: string;
  f: string;
  x?: 1;
  o: { c: ChainId; w: string; a?: string; s: [0 | 1, string, string][] }[];
};

const DEFAULT_ASSET: Record<ChainId, string> = { solana: USDC_SOLANA_MINT, sui: USDC_SUI_COIN_TYPE };

export type TokenCheck =
  | { ok: true; claims: RequirementClaims }
  | { ok: false; reason: 'requirement_malformed' | 'requirement_forged' };

const MAX_TOKEN_LENGTH = 2048;

/** What one quote fixes in an r2 token, made once per quote (and key). */
interface SignTemplate {
  scheme: RequirementClaims['scheme'];
  subject: string;
  price: bigint;
  fee: bigint;
  v2: boolean;
  /** `r2.<kid>.<quote>.`: the token up to its issue part. */
  tokenHead: string;
  /** `r2.<kid>.<digest of quote>.`: the MAC's message up to the issue part. */
  macHead: string;
}

/** The base64url SHA-256 of an r2 token's quote part, as its text. */
const quoteDigest = (quote: string): string => hash('sha256', quote, 'base64url');

function signTemplate(c: RequirementClaims, options: string, prefix: string): SignTemplate {
  const quote = Buffer.from(
    `{"s":${JSON.stringify(c.scheme)},"u":${JSON.stringify(c.subject)},"p":"${c.price}","f":"${c.fee}"` +
      `${c.v2 ? ',"x":1' : ''},"o":${options}}`,
  ).toString('base64url');
  return {
    scheme: c.scheme,
    subject: c.subject,
    price: c.price,
    fee: c.fee,
    v2: c.v2 === true,
    tokenHead: `${prefix}${quote}.`,
    macHead: `${prefix}${quoteDigest(quote)}.`,
  };
}

const fits = (t: SignTemplate, c: RequirementClaims) =>
  t.scheme === c.scheme &&
  t.subject === c.subject &&
  t.price === c.price &&
  t.fee === c.fee &&
  t.v2 === (c.v2 === true);

function optionsJsonOf(c: RequirementClaims): string {
  return JSON.stringify(
    c.options.map((o) => ({
      c: o.chain,
      w: o.network,
      ...(o.assetId === DEFAULT_ASSET[o.chain] ? {} : { a: o.assetId }),
      s: o.splits.map((s) => [s.recipientType === 'provider' ? 0 : 1, s.payTo, s.amount.toString()]),
    })),
  );
}

export function createRequirementTokens(ring: DerivedKey[]) {
  const current = ring[0];
  if (!current) throw new Error('requirement tokens need a key');
  // One keyed MAC per key of the ring, its pads made once (crypto/hmac.ts): the current key's
  // signs (every 402), any key of the ring verifies (every paid request).
  const macs = new Map<string, HmacSha256>(ring.map((k) => [k.kid, hmacSha256Base64url(k.key)]));
  const signMac = macs.get(current.kid) as HmacSha256;
  const prefix = `r2.${current.kid}.`;
  const templates = new WeakMap<object, SignTemplate>();
  const scratch = Buffer.alloc(1024);

  return {
    /**
     * Signs claims. `optionsKey` (the quote's options array: it must stand for options equal
     * to `c.options` but for the memos) lets the parts of the token that are identical for
     * every 402 of one quote be built once.
     */
    sign(c: RequirementClaims, optionsKey?: object): string {
      let t = optionsKey ? templates.get(optionsKey) : undefined;
      if (t === undefined || !fits(t, c)) {
        t = signTemplate(c, optionsJsonOf(c), prefix);
        if (optionsKey) templates.set(optionsKey, t);
      }
      // The issue part's JSON: JSON.stringify keeps it valid whatever the strings hold, both in
      // one call into V8's serializer (`{"n":…,"h":…}` less its `}`). The times are new numbers
      // on every 402: decimal() keeps their text out of the old generation.
      const strings = JSON.stringify({ n: c.nonce, h: c.requestHash });
      const json = `${strings.slice(0, -1)},"i":${decimal(c.issuedAtMs)},"e":${decimal(c.expiresAtMs)}}`;
      // A UTF-8 character is at most 3 bytes per UTF-16 code unit.
      const issue =
        json.length * 3 <= scratch.length
          ? scratch.toString('base64url', 0, scratch.write(json, 0, 'utf8'))
          : Buffer.from(json).toString('base64url');
      return `${t.tokenHead}${issue}.${signMac(`${t.macHead}${issue}`)}`;
    },

    verify(token: string): TokenCheck {
      if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH)
        return { ok: false, reason: 'requirement_malformed' };
      const parts = token.split('.');
      let kid: string;
      let signed: string;
      let sig: string;
      if (parts.length === 5 && parts[0] === 'r2') {
        kid = parts[1] as string;
        signed = `r2.${kid}.${quoteDigest(parts[2] as string)}.${parts[3]}`;
        sig = parts[4] as string;
      } else if (parts.length === 4 && parts[0] === 'r1') {
        kid = parts[1] as string;
        signed = `r1.${kid}.${parts[2]}`;
        sig = parts[3] as string;
      } else return { ok: false, reason: 'requirement_malformed' };
      const mac = macs.get(kid);
      if (!mac) return { ok: false, reason: 'requirement_forged' };
      // The MAC we wrote is canonical base64url: the one given must be those very characters.
      const expected = Buffer.from(mac(signed), 'latin1');
      const given = Buffer.from(sig, 'utf8');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return { ok: false, reason: 'requirement_forged' };
      }
      // Authentic: we wrote it, but parse defensively anyway.
      try {
        const read = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
        let w: Wire;
        if (parts.length === 5) {
          const quote = read(parts[2] as string) as Omit<Wire, 'n' | 'h' | 'i' | 'e'>;
          const issue = read(parts[3] as string) as Pick<Wire, 'n' | 'h' | 'i' | 'e'>;
          w = { ...quote, n: issue.n, h: issue.h, i: issue.i, e: issue.e };
        } else w = read(parts[2] as string) as Wire;
        // Tokens from before the request was signed in bind nothing: refuse them.
        if (typeof w.h !== 'string') return { ok: false, reason: 'requirement_malformed' };
        return { ok: true, claims: claimsOf(w) };
      } catch {
        return { ok: false, reason: 'requirement_malformed' };
      }
    },
  };
}

/** The claims a verified token's fields say. */
function claimsOf(w: Wire): RequirementClaims {
  return {
    scheme: w.s,
    subject: w.u,
    nonce: w.n,
    requestHash: w.h,
    issuedAtMs: w.i,
    expiresAtMs: w.e,
    price: BigInt(w.p),
    fee: BigInt(w.f),
    ...(w.x === 1 ? { v2: true } : {}),
    options: w.o.map((o) => ({
      chain: o.c,
      network: o.w,
      assetId: o.a ?? DEFAULT_ASSET[o.c],
      memo: memoForNonce(w.n),
      splits: o.s.map(([t, payTo, amount]) => ({
        recipientType: t === 0 ? ('provider' as const) : ('platform' as const),
        payTo,
        amount: BigInt(amount),
      })),
    })),
  };
}

export type RequirementTokens = ReturnType<typeof createRequirementTokens>;
