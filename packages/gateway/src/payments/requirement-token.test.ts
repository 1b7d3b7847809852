import { memoForNonce, USDC_SOLANA_MINT } from '@tollgate/protocol';
import { describe, expect, it } from 'vitest';
import { keyRing } from '../crypto/keys.ts';
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

  it('refuse a token whose payload was altered', () => {
    const t = createRequirementTokens(keyRing(A, null, 'requirement-token/v1'));
    const [v, kid, payload, mac] = t.sign(claims).split('.');
    const wire = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    wire.p = '1';
    const altered = [v, kid, Buffer.from(JSON.stringify(wire)).toString('base64url'), mac].join('.');
    expect(t.verify(altered)).toEqual({ ok: false, reason: 'requirement_forged' });
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

  it.each(['', 'r1', 'r1.a.b', 'x1.a.b.c', 'r1.a.b.c.d', `r1.${'x'.repeat(3000)}.b.c`])(
    'refuse the malformed token %j',
    (token) => {
      const t = createRequirementTokens(keyRing(A, null, 'requirement-token/v1'));
      expect(t.verify(token).ok).toBe(false);
    },
  );
});
