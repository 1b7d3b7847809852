import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProtocolError } from './errors.ts';
import {
  buildPaymentProof,
  decodePaymentProof,
  decodePaymentReceipt,
  encodePaymentProof,
  encodePaymentReceipt,
  MAX_PROOF_BYTES,
} from './proof.ts';
import { selectPaymentOption } from './select.ts';
import type { PaymentProof, PaymentRequirement } from './types.ts';

const requirement: PaymentRequirement = {
  error: 'payment_required',
  x402Version: 1,
  scheme: 'exact_split',
  resource: 'GET /p/demo/weather',
  description: 'Weather',
  expiresAt: '2026-11-22T12:05:00.000Z',
  nonce: 'q3v9Jm2yXQ7pS0bT1cW8eA',
  requestHash: 'a'.repeat(64),
  paymentRequirementId: 'v1.k1.payload.sig',
  accepts: [
    {
      chain: 'solana',
      network: 'mainnet',
      asset: 'USDC',
      totalAmount: '0.011',
      decimals: 6,
      mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      memo: 'tollgate:v1:q3v9Jm2yXQ7pS0bT1cW8eA',
      splits: [
        { recipientType: 'provider', payTo: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin', amount: '0.01' },
        { recipientType: 'platform', payTo: 'FeeWa11et1111111111111111111111111111111111', amount: '0.001' },
      ],
    },
  ],
};
const sig = '5'.repeat(88);
const proof: PaymentProof = buildPaymentProof(requirement, requirement.accepts[0]!, {
  payer: '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU',
  txHashOrDigest: sig,
});

function expectTyped(f: () => unknown): void {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ProtocolError);
    expect((e as ProtocolError).code).toBe('invalid_payment_header');
    return;
  }
  throw new Error('expected a ProtocolError');
}

describe('payment proof codec', () => {
  it('round-trips a built proof', () => {
    expect(decodePaymentProof(encodePaymentProof(proof))).toEqual(proof);
  });

  it('copies the binding fields from the requirement', () => {
    expect(proof).toMatchObject({
      x402Version: 1,
      scheme: 'exact_split',
      chain: 'solana',
      network: 'mainnet',
      asset: 'USDC',
      nonce: requirement.nonce,
      requestHash: requirement.requestHash,
      paymentRequirementId: requirement.paymentRequirementId,
      expiresAt: requirement.expiresAt,
    });
  });

  it('accepts url-safe base64 without padding', () => {
    const urlSafe = Buffer.from(JSON.stringify(proof)).toString('base64url');
    expect(decodePaymentProof(urlSafe)).toEqual(proof);
  });

  it.each([
    ['not base64', '!!!!'],
    ['empty', ''],
    ['base64 of non-JSON', Buffer.from('hello').toString('base64')],
    ['a JSON array', Buffer.from('[1,2]').toString('base64')],
    ['JSON null', Buffer.from('null').toString('base64')],
    ['invalid UTF-8', Buffer.from([0xff, 0xfe, 0x7b]).toString('base64')],
    ['an unknown field', Buffer.from(JSON.stringify({ ...proof, extra: 1 })).toString('base64')],
    ['a missing field', Buffer.from(JSON.stringify({ ...proof, nonce: undefined })).toString('base64')],
    ['a wrong version', Buffer.from(JSON.stringify({ ...proof, x402Version: 2 })).toString('base64')],
    ['an unknown chain', Buffer.from(JSON.stringify({ ...proof, chain: 'eth' })).toString('base64')],
    [
      'a non-base58 tx id',
      Buffer.from(JSON.stringify({ ...proof, txHashOrDigest: '0xdeadbeef' })).toString('base64'),
    ],
    [
      'a __proto__ key',
      Buffer.from(`{"__proto__":{"polluted":1},${JSON.stringify(proof).slice(1)}`).toString('base64'),
    ],
    ['an oversized header', 'A'.repeat(MAX_PROOF_BYTES * 2)],
    ['a number', 42],
    ['undefined', undefined],
  ])('rejects %s with invalid_payment_header', (_name, header) => {
    expectTyped(() => decodePaymentProof(header));
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('never throws anything but its typed error on random input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.base64String(), fc.anything()), (input) => {
        try {
          decodePaymentProof(input);
        } catch (e) {
          expect(e).toBeInstanceOf(ProtocolError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws anything but its typed error on mutated valid proofs', () => {
    const valid = encodePaymentProof(proof);
    const json = JSON.stringify(proof);
    fc.assert(
      fc.property(
        fc.nat({ max: valid.length - 1 }),
        fc.nat({ max: json.length - 1 }),
        fc.string({ maxLength: 4 }),
        fc.boolean(),
        (i, j, insert, onJson) => {
          const mutated = onJson
            ? Buffer.from(json.slice(0, j) + insert + json.slice(j + 1)).toString('base64')
            : valid.slice(0, i) + insert + valid.slice(i + 1);
          try {
            const decoded = decodePaymentProof(mutated);
            expect(typeof decoded.txHashOrDigest).toBe('string');
          } catch (e) {
            expect(e).toBeInstanceOf(ProtocolError);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('round-trips a receipt', () => {
    const receipt = {
      success: true,
      chain: 'sui' as const,
      network: 'mainnet',
      txHashOrDigest: 'D1g3st',
      payer: '0xabc',
      paymentRequirementId: 'id',
    };
    expect(decodePaymentReceipt(encodePaymentReceipt(receipt))).toEqual(receipt);
  });
});

describe('selectPaymentOption', () => {
  it('returns the option for the payer chain', () => {
    expect(selectPaymentOption(requirement, 'solana').mint).toBe(
      'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    );
  });

  it('throws unsupported_chain when the chain is not offered', () => {
    try {
      selectPaymentOption(requirement, 'sui');
      throw new Error('expected a throw');
    } catch (e) {
      expect(e).toBeInstanceOf(ProtocolError);
      expect((e as ProtocolError).code).toBe('unsupported_chain');
    }
  });
});
