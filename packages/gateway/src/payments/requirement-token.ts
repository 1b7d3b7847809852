/**
 * The `paymentRequirementId`: a token signed with HMAC-SHA-256 that carries the
 * whole quote, so issuing a 402 writes nothing and a retry is checked against
 * exactly what was quoted (DESIGN §4.3). Format: `r1.<kid>.<payload b64url>.<mac b64url>`.
 * The key id names the key that signed it, so the secret can rotate.
 */
import { timingSafeEqual } from 'node:crypto';
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

/**
 * What one quote fixes in a token, made once per quote: the JSON before and after the
 * per-402 fields (nonce, request hash, times), already in base64url where it can be.
 * Base64 encodes 3 bytes at a time, so `b64(x ‖ y) = b64(x) ‖ b64(y)` when x's length is a
 * multiple of 3: the head's whole 3-byte groups are encoded once, and the tail once for each
 * of the 3 ways the bytes before it can end; a 402 encodes only its own ~140 bytes.
 */
interface SignTemplate {
  scheme: RequirementClaims['scheme'];
  subject: string;
  price: bigint;
  fee: bigint;
  v2: boolean;
  /** base64url of the head `{"s":…,"u":…,"n":` up to its last whole 3-byte group. */
  headB64: string;
  /** The head's bytes after that (0-2). */
  headRest: Buffer;
  /** The tail `,"p":…,"f":…[,"x":1],"o":[…]}`. */
  tail: Buffer;
  /** tailB64[k]: base64url of the tail without its first k bytes (k < 3). */
  tailB64: [string, string, string];
}

function signTemplate(c: RequirementClaims, options: string): SignTemplate {
  const head = Buffer.from(`{"s":${JSON.stringify(c.scheme)},"u":${JSON.stringify(c.subject)},"n":`);
  const whole = head.length - (head.length % 3);
  const tail = Buffer.from(`,"p":"${c.price}","f":"${c.fee}"${c.v2 ? ',"x":1' : ''},"o":${options}}`);
  return {
    scheme: c.scheme,
    subject: c.subject,
    price: c.price,
    fee: c.fee,
    v2: c.v2 === true,
    headB64: head.toString('base64url', 0, whole),
    headRest: head.subarray(whole),
    tail,
    tailB64: [tail.toString('base64url'), tail.toString('base64url', 1), tail.toString('base64url', 2)],
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
  const prefix = `r1.${current.kid}.`;
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
        t = signTemplate(c, optionsJsonOf(c));
        if (optionsKey) templates.set(optionsKey, t);
      }
      // Same fields and order as Wire; JSON.stringify keeps it valid JSON whatever the strings
      // hold: both in one call into V8's serializer (`{"n":…,"h":…}` less its `{"n":` and `}`).
      // The times are new numbers on every 402: decimal() keeps their text out of the old generation.
      const strings = JSON.stringify({ n: c.nonce, h: c.requestHash });
      const mid = `${strings.slice(5, -1)},"i":${decimal(c.issuedAtMs)},"e":${decimal(c.expiresAtMs)}`;
      let payload: string;
      // A UTF-8 character is at most 3 bytes per UTF-16 code unit; 2 + 2 for the head's and tail's bytes.
      if (mid.length * 3 + 4 <= scratch.length) {
        let n = t.headRest.copy(scratch, 0);
        n += scratch.write(mid, n, 'utf8');
        const k = (3 - (n % 3)) % 3; // the tail is never shorter than 3 bytes
        n += t.tail.copy(scratch, n, 0, k);
        payload = `${t.headB64}${scratch.toString('base64url', 0, n)}${t.tailB64[k as 0 | 1 | 2]}`;
      } else {
        payload = Buffer.concat([t.headRest, Buffer.from(mid), t.tail]).toString('base64url');
        payload = `${t.headB64}${payload}`;
      }
      const signed = `${prefix}${payload}`;
      return `${signed}.${signMac(signed)}`;
    },

    verify(token: string): TokenCheck {
      if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH)
        return { ok: false, reason: 'requirement_malformed' };
      const parts = token.split('.');
      if (parts.length !== 4 || parts[0] !== 'r1') return { ok: false, reason: 'requirement_malformed' };
      const [, kid, payload, sig] = parts as [string, string, string, string];
      const mac = macs.get(kid);
      if (!mac) return { ok: false, reason: 'requirement_forged' };
      // The MAC we wrote is canonical base64url: the one given must be those very characters.
      const expected = Buffer.from(mac(`r1.${kid}.${payload}`), 'latin1');
      const given = Buffer.from(sig, 'utf8');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return { ok: false, reason: 'requirement_forged' };
      }
      // Authentic: we wrote it, but parse defensively anyway.
      try {
        const w = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Wire;
        // Tokens from before the request was signed in bind nothing: refuse them.
        if (typeof w.h !== 'string') return { ok: false, reason: 'requirement_malformed' };
        return {
          ok: true,
          claims: {
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
          },
        };
      } catch {
        return { ok: false, reason: 'requirement_malformed' };
      }
    },
  };
}

export type RequirementTokens = ReturnType<typeof createRequirementTokens>;
