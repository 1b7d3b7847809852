import { USDC_SOLANA_MINT } from '@tollgate/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyRing } from '../crypto/keys.ts';
import {
  isoTime,
  issueRequirement,
  type Quote,
  requestHashFor,
  requirementBody,
  requirementJson,
} from './requirement.ts';
import { createRequirementTokens } from './requirement-token.ts';

const tokens = createRequirementTokens(keyRing('a'.repeat(40), null, 'requirement-token/v1'));
const facts = { method: 'GET', pathWithQuery: '/p/demo/weather?city=Oslo', bodySha256: 'ab'.repeat(32) };

const quote = (over: Partial<Quote> = {}): Quote => ({
  scheme: 'exact_split',
  subject: 'ep:ep_1',
  resource: 'GET /p/demo/weather',
  description: 'Weather "today" \u2028 in \\ Oslo',
  price: 10_000n,
  fee: 1_000n,
  options: [
    {
      chain: 'sui',
      network: 'mainnet',
      assetId: '0x2::fake::USDC',
      splits: [{ recipientType: 'platform', payTo: '0xplat"memo":', amount: 11_000n }],
    },
    {
      chain: 'solana',
      network: 'mainnet',
      assetId: USDC_SOLANA_MINT,
      splits: [
        { recipientType: 'provider', payTo: 'Prov', amount: 10_000n },
        { recipientType: 'platform', payTo: 'Plat', amount: 1_000n },
      ],
    },
  ],
  cost: {
    endpoint: { amount: '0.01', asset: 'USDC' },
    platformFee: { amount: '0.001', asset: 'USDC' },
    total: { amount: '0.011', asset: 'USDC' },
  },
  ...over,
});

describe('the 402 body', () => {
  it('is sent as the JSON of the requirement plus its requestId, byte for byte, for every quote shape', () => {
    const { cost: _none, ...withoutCost } = quote();
    for (const q of [quote(), withoutCost, quote({ v2: true }), quote({ options: [] })]) {
      for (let i = 0; i < 3; i++) {
        const issued = issueRequirement(tokens, q, facts, 1_795_000_000_000 + i, 300);
        const { jsonHead, jsonHeadBytes } = issued;
        const body = requirementBody(q, issued);
        const { json } = requirementJson(jsonHead, jsonHeadBytes, `req_${i}"x`);
        expect(json).toBe(JSON.stringify({ ...body, requestId: `req_${i}"x` }));
        // Its length, counted from its parts (the description's characters are not all one byte).
        expect(jsonHeadBytes).toBe(Buffer.byteLength(jsonHead));
        for (const id of [`req_${i}"x`, 'req_é✓']) {
          const answer = requirementJson(jsonHead, jsonHeadBytes, id);
          expect(answer.bytes).toBe(Buffer.byteLength(answer.json));
        }
        expect(JSON.parse(json).accepts.map((a: { memo: string }) => a.memo)).toEqual(
          body.accepts.map((a) => a.memo),
        );
      }
    }
  });
});

describe('issuing', () => {
  it('binds the request hash a retry recomputes (requestHashFor), for every quote shape and request', () => {
    const { cost: _none, ...withoutCost } = quote();
    const requests = [
      facts,
      { method: 'post', pathWithQuery: '/p/demo/x?a="b"&c=\u00e9', bodySha256: 'AB'.repeat(32) },
      {
        method: 'DELETE',
        pathWithQuery: '/p/demo',
        bodySha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      },
    ];
    for (const q of [
      quote(),
      withoutCost,
      quote({ v2: true }),
      quote({ options: [] }),
      quote({ scheme: 'exact' }),
    ]) {
      for (const req of requests) {
        const issued = issueRequirement(tokens, q, req, 1_795_000_000_123, 300);
        const { claims } = issued;
        const body = requirementBody(q, issued);
        expect(claims.requestHash).toBe(requestHashFor(claims, req));
        expect(body.requestHash).toBe(claims.requestHash);
        expect(tokens.verify(body.paymentRequirementId)).toEqual({ ok: true, claims });
      }
    }
  });

  it('writes the expiry as toISOString does', () => {
    const ms = fc.oneof(
      fc.integer({ min: -62_000_000_000_000, max: 253_402_300_799_999 }),
      fc.integer({ min: 1_795_000_000_000, max: 1_795_000_010_000 }),
      fc.double({ min: 0, max: 2e12, noNaN: true }),
    );
    fc.assert(
      fc.property(fc.array(ms, { minLength: 1, maxLength: 5 }), (list) => {
        for (const m of list) expect(isoTime(m)).toBe(new Date(m).toISOString());
      }),
      { numRuns: 500 },
    );
    expect(isoTime(1_795_000_000_005)).toBe(new Date(1_795_000_000_005).toISOString());
    expect(isoTime(1_795_000_000_050)).toBe(new Date(1_795_000_000_050).toISOString());
    expect(isoTime(-1)).toBe('1969-12-31T23:59:59.999Z');
  });
});
