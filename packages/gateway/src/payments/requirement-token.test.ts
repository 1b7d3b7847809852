import { createHash, createHmac } from 'node:crypto';
import { memoForNonce, USDC_SOLANA_MINT, USDC_SUI_COIN_TYPE } from '@tollgate/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { oldBytesPerCall } from '../../test/support/old-generation.ts';
import { type DerivedKey, keyRing } from '../crypto/keys.ts';
import { createRequirementTokens, type RequirementClaims } from './requirement-token.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const claims: RequirementClaims = {
  scheme: 'exact_split',
  subject: 'ep:ep_1',
  nonce: 'q3v9Jm2yXQ7pS0bT1cW8eA',
  requestHash: 'ab'.repeat(32),
  issuedAtMs: 1_795_000_000_000,
  expiresAtMs: 1_795_000_300_000,
  price: 10_000n,
  fee: 1_000n,
  options: [
    {
      chain: 'solana',
      network: 'mainnet',
      assetId: USDC_SOLANA_MINT,
      memo: memoForNonce('q3v9Jm2yXQ7pS0bT1cW8eA'),
      splits: [
        { recipientType: 'provider', payTo: 'Prov', amount: 10_000n },
        { recipientType: 'platform', payTo: 'Plat', amount: 1_000n },
      ],
    },
    {
      chain: 'sui',
      network: 'mainnet',
      assetId: '0x2::fake::USDC',
      memo: memoForNonce('q3v9Jm2yXQ7pS0bT1cW8eA'),
      splits: [{ recipientType: 'platform', payTo: '0xplat', amount: 11_000n }],
    },
  ],
};

describe('requirement tokens', () => {
  it('round-trip every claim, including a non-default asset', () => {
    const t = createRequirementTokens(keyRing(A, null, 'requirement-token/v1'));
    expect(t.verify(t.sign(claims))).toEqual({ ok: true, claims });
  });

  it('refuse a token whose quote or issue part was altered, or taken from another token', () => {
    const t = createRequirementTokens(keyRing(A, null, 'requirement-token/v1'));
    const token = t.sign(claims);
    const [v, kid, quote, issue, mac] = token.split('.') as [string, string, string, string, string];
    expect(v).toBe('r2');
    expect(t.verify(token).ok).toBe(true);
    const edit = (part: string, change: (w: Record<string, unknown>) => void) => {
      const w = JSON.parse(Buffer.from(part, 'base64url').toString());
      change(w);
      return Buffer.from(JSON.stringify(w)).toString('base64url');
    };
    const forged = [
      // A lower price, another recipient, a later expiry, another request.
      [v, kid, edit(quote, (w) => (w.p = '1')), issue, mac],
      [v, kid, edit(quote, (w) => ((w.o as { s: unknown[][] }[])[0]!.s[0]![1] = 'Thief')), issue, mac],
      [v, kid, quote, edit(issue, (w) => (w.e = (w.e as number) + 3_600_000)), mac],
      [v, kid, quote, edit(issue, (w) => (w.h = 'cd'.repeat(32))), mac],
    ];
    // Parts of two genuine tokens put together: another quote's part, another 402's issue part.
    const other = t.sign({ ...claims, price: 1n }).split('.');
    const later = t.sign({ ...claims, nonce: 'another-nonce', issuedAtMs: claims.issuedAtMs + 1 }).split('.');
    forged.push(
      [v, kid, other[2]!, issue, mac],
      [v, kid, quote, later[3]!, mac],
      [v, kid, quote, issue, later[4]!],
    );
    // The quote part's digest in its place (what the MAC covers) is not a token either.
    forged.push([v, kid, createHash('sha256').update(quote).digest('base64url'), issue, mac]);
    for (const parts of forged)
      expect(t.verify(parts.join('.'))).toEqual({ ok: false, reason: 'requirement_forged' });
  });

  it('refuse a token whose MAC is the right bytes written otherwise (padding, a stray or non-ASCII character)', () => {
    const t = createRequirementTokens(keyRing(A, null, 'requirement-token/v1'));
    const token = t.sign(claims);
    const head = token.slice(0, token.lastIndexOf('.') + 1);
    const mac = token.slice(head.length);
    expect(t.verify(token).ok).toBe(true);
    // Each decodes (base64url, leniently) to the same 32 bytes; only the canonical text is ours.
    for (const written of [`${mac}=`, `${mac}*`, `${mac.slice(0, 10)} ${mac.slice(10)}`, `${mac}\u0100`]) {
      expect(Buffer.from(written, 'base64url').equals(Buffer.from(mac, 'base64url'))).toBe(true);
      expect(t.verify(`${head}${written}`)).toEqual({ ok: false, reason: 'requirement_forged' });
    }
  });

  it('refuse a token signed under another secret', () => {
    const other = createRequirementTokens(keyRing(B, null, 'requirement-token/v1'));
    const t = createRequirementTokens(keyRing(A, null, 'requirement-token/v1'));
    expect(t.verify(other.sign(claims))).toEqual({ ok: false, reason: 'requirement_forged' });
  });

  it('accept tokens of the previous secret during a rotation', () => {
    const old = createRequirementTokens(keyRing(A, null, 'requirement-token/v1')).sign(claims);
    const rotated = createRequirementTokens(keyRing(B, A, 'requirement-token/v1'));
    expect(rotated.verify(old)).toEqual({ ok: true, claims });
  });

  it.each([
    '',
    'r1',
    'r1.a.b',
    'x1.a.b.c',
    'r1.a.b.c.d',
    'r2.a.b.c',
    'r2.a.b.c.d.e',
    'x2.a.b.c.d',
    `r1.${'x'.repeat(3000)}.b.c`,
    `r2.${'x'.repeat(3000)}.b.c.d`,
  ])('refuse the malformed token %j', (token) => {
    const t = createRequirementTokens(keyRing(A, null, 'requirement-token/v1'));
    expect(t.verify(token).ok).toBe(false);
  });

  // Written by the signer before issue 14's one-shot HMAC and per-quote templates (a6f6bb7),
  // for `claims` under key A, and for a v2 variant with an escaped subject signed with
  // claims.options as its optionsKey. Tokens in flight across the upgrade must still verify.
  const BEFORE = [
    'r1.ffb02978.eyJzIjoiZXhhY3Rfc3BsaXQiLCJ1IjoiZXA6ZXBfMSIsIm4iOiJxM3Y5Sm0yeVhRN3BTMGJUMWNXOGVBIiwiaCI6ImFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWIiLCJpIjoxNzk1MDAwMDAwMDAwLCJlIjoxNzk1MDAwMzAwMDAwLCJwIjoiMTAwMDAiLCJmIjoiMTAwMCIsIm8iOlt7ImMiOiJzb2xhbmEiLCJ3IjoibWFpbm5ldCIsInMiOltbMCwiUHJvdiIsIjEwMDAwIl0sWzEsIlBsYXQiLCIxMDAwIl1dfSx7ImMiOiJzdWkiLCJ3IjoibWFpbm5ldCIsImEiOiIweDI6OmZha2U6OlVTREMiLCJzIjpbWzEsIjB4cGxhdCIsIjExMDAwIl1dfV19.9wRFos7zseqQsTDh1foaGOsLNoKXCKGO55pJZ84tH6Q',
    'r1.ffb02978.eyJzIjoiZXhhY3Rfc3BsaXQiLCJ1Ijoiw6lwIFwieFwiIiwibiI6InEzdjlKbTJ5WFE3cFMwYlQxY1c4ZUEiLCJoIjoiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYiIsImkiOjE3OTUwMDAwMDAwMDAsImUiOjE3OTUwMDAzMDAwMDAsInAiOiIxMDAwMCIsImYiOiIxMDAwIiwieCI6MSwibyI6W3siYyI6InNvbGFuYSIsInciOiJtYWlubmV0IiwicyI6W1swLCJQcm92IiwiMTAwMDAiXSxbMSwiUGxhdCIsIjEwMDAiXV19LHsiYyI6InN1aSIsInciOiJtYWlubmV0IiwiYSI6IjB4Mjo6ZmFrZTo6VVNEQyIsInMiOltbMSwiMHhwbGF0IiwiMTEwMDAiXV19XX0.BgaWvo1-EhcUGmwx9m6jqYrwaJnHbOkUHBcYDksuPOE',
  ];
  const v2Variant: RequirementClaims = { ...claims, v2: true, subject: '\u00e9p "x"' };

  it('verify r1 tokens, issued before the one-shot HMAC and before r2', () => {
    const t = createRequirementTokens(keyRing(A, null, 'requirement-token/v1'));
    expect(t.verify(BEFORE[0]!)).toEqual({ ok: true, claims });
    expect(t.verify(BEFORE[1]!)).toEqual({ ok: true, claims: v2Variant });
    // And not once altered.
    const [v, kid, payload, mac] = BEFORE[0]!.split('.') as [string, string, string, string];
    const wire = JSON.parse(Buffer.from(payload, 'base64url').toString());
    wire.p = '1';
    const altered = [v, kid, Buffer.from(JSON.stringify(wire)).toString('base64url'), mac].join('.');
    expect(t.verify(altered)).toEqual({ ok: false, reason: 'requirement_forged' });
  });

  /** The wire form's options, as both formats write them. */
  const wireOptions = (c: RequirementClaims) => {
    const defaults: Record<string, string> = { solana: USDC_SOLANA_MINT, sui: USDC_SUI_COIN_TYPE };
    return c.options.map((o) => ({
      c: o.chain,
      w: o.network,
      ...(o.assetId === defaults[o.chain] ? {} : { a: o.assetId }),
      s: o.splits.map((s) => [s.recipientType === 'provider' ? 0 : 1, s.payTo, s.amount.toString()]),
    }));
  };
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  /** The r1 signer as it was: the whole JSON, base64url, and createHmac over `r1.<kid>.<payload>`. */
  const referenceSignR1 = (key: DerivedKey, c: RequirementClaims) => {
    const wire = {
      s: c.scheme,
      u: c.subject,
      n: c.nonce,
      h: c.requestHash,
      i: c.issuedAtMs,
      e: c.expiresAtMs,
      p: c.price.toString(),
      f: c.fee.toString(),
      ...(c.v2 ? { x: 1 } : {}),
      o: wireOptions(c),
    };
    const signed = `r1.${key.kid}.${b64(wire)}`;
    return `${signed}.${createHmac('sha256', key.key).update(signed).digest('base64url')}`;
  };
  /** r2 by the definition in requirement-token.ts, with createHash and createHmac. */
  const referenceSign = (key: DerivedKey, c: RequirementClaims) => {
    const quote = b64({
      s: c.scheme,
      u: c.subject,
      p: c.price.toString(),
      f: c.fee.toString(),
      ...(c.v2 ? { x: 1 } : {}),
      o: wireOptions(c),
    });
    const issue = b64({ n: c.nonce, h: c.requestHash, i: c.issuedAtMs, e: c.expiresAtMs });
    const digest = createHash('sha256').update(quote).digest('base64url');
    const mac = createHmac('sha256', key.key).update(`r2.${key.kid}.${digest}.${issue}`).digest('base64url');
    return `r2.${key.kid}.${quote}.${issue}.${mac}`;
  };

  it('sign exactly as the reference signer for any claims, whatever was cached for the options key', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 20 });
    const amount = fc.bigInt({ min: 0n, max: 10n ** 15n });
    const option = fc.record({
      chain: fc.constantFrom('solana' as const, 'sui' as const),
      network: text,
      assetId: fc.oneof(fc.constantFrom(USDC_SOLANA_MINT, USDC_SUI_COIN_TYPE), text),
      memo: text,
      splits: fc.array(
        fc.record({
          recipientType: fc.constantFrom('provider' as const, 'platform' as const),
          payTo: text,
          amount,
        }),
        { maxLength: 3 },
      ),
    });
    const claim = fc.record(
      {
        scheme: fc.constantFrom('exact_split' as const, 'exact' as const),
        subject: text,
        nonce: text,
        requestHash: text,
        issuedAtMs: fc.integer({ min: 0, max: 2 ** 45 }),
        expiresAtMs: fc.integer({ min: 0, max: 2 ** 45 }),
        price: amount,
        fee: amount,
        options: fc.array(option, { maxLength: 3 }),
        v2: fc.constant(true),
      },
      {
        requiredKeys: [
          'scheme',
          'subject',
          'nonce',
          'requestHash',
          'issuedAtMs',
          'expiresAtMs',
          'price',
          'fee',
          'options',
        ],
      },
    );
    const ring = keyRing(A, null, 'requirement-token/v1');
    const t = createRequirementTokens(ring);
    fc.assert(
      fc.property(claim, claim, (c, other) => {
        const token = t.sign(c, c.options);
        expect(token).toBe(referenceSign(ring[0]!, c));
        expect(t.sign(c)).toBe(token);
        // verify derives each memo from the nonce.
        const memo = memoForNonce(c.nonce);
        const read = { ...c, options: c.options.map((o) => ({ ...o, memo })) };
        if (token.length <= 2048) expect(t.verify(token)).toEqual({ ok: true, claims: read });
        // The same claims in the r1 format verify to the same.
        const r1 = referenceSignR1(ring[0]!, c);
        if (r1.length <= 2048) expect(t.verify(r1)).toEqual({ ok: true, claims: read });
        // Other claims over the same options (the key's contract): what was cached for c must not leak in.
        const sameOptions = { ...other, options: c.options };
        expect(t.sign(sameOptions, c.options)).toBe(referenceSign(ring[0]!, sameOptions));
        expect(t.sign(c, c.options)).toBe(token);
      }),
      { numRuns: 300 },
    );
    // Per-402 fields too long for the signer's scratch buffer take the plain path.
    const long = { ...claims, nonce: 'é'.repeat(400), requestHash: '€'.repeat(300) };
    expect(t.sign(long, claims.options)).toBe(referenceSign(ring[0]!, long));
  });

  it('sign a new issue time and expiry without leaving garbage in the old generation', () => {
    // Every 402 signs the time it was issued: a number V8's number-string cache has not seen
    // (decimal.ts says why that would land in the old generation).
    const t = createRequirementTokens(keyRing(A, null, 'requirement-token/v1'));
    const perToken = oldBytesPerCall(
      (i) =>
        t.sign(
          { ...claims, issuedAtMs: claims.issuedAtMs + i * 7919, expiresAtMs: claims.expiresAtMs + i * 7919 },
          claims.options,
        ),
      20_000,
    );
    expect(perToken).toBeLessThan(4);
  });
});
