import { readFileSync } from 'node:fs';
import { bcs } from '@mysten/sui/bcs';
import { fromBase64 } from '@mysten/sui/utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OfferedOption, VerifyInput } from '../chain.ts';
import { ChainUnavailableError, decide } from '../chain.ts';
import type { SuiBalanceChange, SuiTransactionBody, SuiTransactionResult } from './normalise.ts';
import { decodeBcsString, normaliseSuiTransaction } from './normalise.ts';
import { createSuiSource } from './source.ts';

const USDC = '0xdba34672e30cb065b1f93e3ab55318768fd6fef66c15942c9f7cb846e2f900e7::usdc::USDC';
const SENDER = '0x935029ca5219502a47ac9b69f556ccf6e2198b5e7815cf50f68846f723739cbd';
const PROVIDER = '0x62310ee294108c13f3496ce6895f12f3c2cf3994c74c2911501535e23ccc74ff';
const PLATFORM = '0x0f100cc7b22236c5993a35e2319b1d4405692c57da63f3b5a1c7e0fd3fc891b1';
const MEMO = 'tollgate:v1:9c1e2b7f0a4d4c6e8b1f3a5d7c9e1f20';
const TIME = 1734500336136;

/** The fixture as the SDK hands it over (bcs as bytes), as a fresh copy each time. */
function fixture(): { $kind: 'Transaction'; Transaction: SuiTransactionBody } {
  const raw = JSON.parse(
    readFileSync(new URL('./fixtures/usdc-two-recipients.json', import.meta.url), 'utf8'),
  );
  return { $kind: 'Transaction', Transaction: { ...raw.Transaction, bcs: fromBase64(raw.Transaction.bcs) } };
}

function failed(body: SuiTransactionBody): SuiTransactionResult {
  return { $kind: 'FailedTransaction', FailedTransaction: { ...body, status: { success: false } } };
}

const sameAsset = createSuiSource({ rpcUrl: 'http://127.0.0.1:9', network: 'mainnet' }).sameAsset;

function verify(result: SuiTransactionResult, asset = USDC) {
  const option: OfferedOption = {
    chain: 'sui',
    network: 'mainnet',
    asset,
    memo: MEMO,
    splits: [
      { recipientType: 'provider', payTo: PROVIDER, amount: 155_567_900_000n },
      { recipientType: 'platform', payTo: PLATFORM, amount: 15_999_900_000n },
    ],
  };
  const input: VerifyInput = {
    option,
    issuedAtMs: TIME - 60_000,
    expiresAtMs: TIME + 240_000,
    skewMs: 30_000,
    payer: SENDER,
    txHashOrDigest: fixture().Transaction.digest,
  };
  return decide(input, normaliseSuiTransaction(result), sameAsset);
}

describe('normaliseSuiTransaction on a mainnet-shaped USDC transfer', () => {
  it('reads sender, finality, time, every address delta and the memo', () => {
    const tx = normaliseSuiTransaction(fixture());
    expect(tx).toMatchObject({
      id: fixture().Transaction.digest,
      final: true,
      success: true,
      timeMs: TIME,
      signers: [SENDER],
      assetAuthorities: [SENDER],
    });
    expect(tx.deltas).toEqual(
      expect.arrayContaining([
        { owner: PROVIDER, asset: USDC, delta: 155_567_900_000n },
        { owner: PLATFORM, asset: USDC, delta: 15_999_900_000n },
        { owner: SENDER, asset: USDC, delta: -171_567_800_000n },
      ]),
    );
    expect(tx.memos).toEqual([MEMO]);
  });

  it('is verified by decide for the offered splits', () => {
    expect(verify(fixture())).toMatchObject({ status: 'verified', timeMs: TIME });
  });

  it('marks a failed transaction as not successful', () => {
    expect(normaliseSuiTransaction(failed(fixture().Transaction)).success).toBe(false);
    expect(verify(failed(fixture().Transaction))).toEqual({
      status: 'rejected',
      reason: 'transaction_failed',
    });
  });

  it('does not trust a success flag on a FailedTransaction', () => {
    const f = fixture().Transaction;
    const result: SuiTransactionResult = { $kind: 'FailedTransaction', FailedTransaction: f };
    expect(normaliseSuiTransaction(result).success).toBe(false);
  });

  it('treats a transaction without a checkpoint as not final', () => {
    const f = fixture();
    f.Transaction.checkpoint = null;
    f.Transaction.timestampMs = null;
    expect(normaliseSuiTransaction(f)).toMatchObject({ final: false, timeMs: null });
    expect(verify(f)).toEqual({ status: 'pending', reason: 'not_final' });
  });

  it('treats a checkpointed transaction whose time the node does not report as pending, not refused', () => {
    const f = fixture();
    f.Transaction.timestampMs = null;
    expect(normaliseSuiTransaction(f)).toMatchObject({ final: true, timeMs: null });
    expect(verify(f)).toEqual({ status: 'pending', reason: 'not_final' });
  });

  it('ignores balance changes of objects (owner kinds other than AddressOwner)', () => {
    const f = fixture();
    const legacy: SuiBalanceChange[] = [
      { owner: { ObjectOwner: PROVIDER }, coinType: USDC, amount: '155567900000' },
      { owner: { AddressOwner: PLATFORM }, coinType: USDC, amount: '15999900000' },
      { owner: 'Immutable', coinType: USDC, amount: '1' },
      { owner: { AddressOwner: SENDER }, coinType: USDC, amount: '-171567800000' },
    ];
    f.Transaction.balanceChanges = legacy;
    const tx = normaliseSuiTransaction(f);
    expect(tx.deltas.map((d) => d.owner)).toEqual([PLATFORM, SENDER]);
    expect(verify(f)).toEqual({ status: 'rejected', reason: 'amount_mismatch' });
  });

  it('matches a coin type written in a non-normalised form', () => {
    const f = fixture();
    const shouting = `0x${USDC.slice(2, 66).toUpperCase()}::usdc::USDC`;
    f.Transaction.balanceChanges = f.Transaction.balanceChanges.map((c) =>
      c.coinType === USDC ? { ...c, coinType: shouting } : c,
    );
    expect(verify(f)).toMatchObject({ status: 'verified' });
    expect(sameAsset('0x2::sui::SUI', `0x${'0'.repeat(63)}2::sui::SUI`)).toBe(true);
  });

  it('rejects the same amounts in a look-alike coin from another package', () => {
    const f = fixture();
    const lookalike = `0x${'a'.repeat(64)}::usdc::USDC`;
    f.Transaction.balanceChanges = f.Transaction.balanceChanges.map((c) =>
      c.coinType === USDC ? { ...c, coinType: lookalike } : c,
    );
    expect(verify(f)).toEqual({ status: 'rejected', reason: 'wrong_asset' });
    expect(sameAsset(USDC, 'not a type')).toBe(false);
  });

  it('takes the sender from the signed bytes, whatever the balance changes say', () => {
    const f = fixture();
    const data = bcs.TransactionData.parse(f.Transaction.bcs);
    expect(normaliseSuiTransaction(f).signers).toEqual([data.V1.sender]);
  });

  it('refuses bytes that do not hash to the digest', () => {
    const f = fixture();
    f.Transaction.digest = '11111111111111111111111111111112';
    expect(() => normaliseSuiTransaction(f)).toThrow(ChainUnavailableError);
  });

  it('refuses a balance change amount that is not an integer', () => {
    const f = fixture();
    f.Transaction.balanceChanges[1] = { ...f.Transaction.balanceChanges[1]!, amount: '1e9' };
    expect(() => normaliseSuiTransaction(f)).toThrow(ChainUnavailableError);
  });
});

describe('decodeBcsString (memo candidates from Pure inputs)', () => {
  const enc = (s: string) => bcs.string().serialize(s).toBytes();

  it('reads what the SDK writes with tx.pure.string, including multi-byte lengths', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), (s) => decodeBcsString(enc(s)) === s),
    );
    expect(decodeBcsString(enc('x'.repeat(200)))).toBe('x'.repeat(200));
  });

  it('accepts only canonical encodings, so each memo has one byte form', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        const s = decodeBcsString(bytes);
        return s === null || Buffer.from(enc(s)).equals(Buffer.from(bytes));
      }),
    );
  });

  it('refuses invalid UTF-8, trailing bytes, short data and padded lengths', () => {
    expect(decodeBcsString(Uint8Array.of(2, 0xc3, 0x28))).toBeNull();
    expect(decodeBcsString(Uint8Array.of(1, 0x61, 0x62))).toBeNull();
    expect(decodeBcsString(Uint8Array.of(3, 0x61))).toBeNull();
    expect(decodeBcsString(Uint8Array.of(0x81, 0x00, 0x61))).toBeNull();
    expect(decodeBcsString(new Uint8Array())).toBeNull();
  });

  it('does not read a u64 amount or an address as a memo', () => {
    expect(decodeBcsString(bcs.u64().serialize(155_567_900_000n).toBytes())).toBeNull();
    expect(decodeBcsString(bcs.Address.serialize(PROVIDER).toBytes())).toBeNull();
  });
});
