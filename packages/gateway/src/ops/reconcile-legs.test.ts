import { memoForNonce } from '@tollgate/protocol';
import { describe, expect, it } from 'vitest';
import type { ObservedTransaction } from '../chains/chain.ts';
import type { LedgerRedemption, Payable } from '../store/store.ts';
import { comparePayable, compareTransaction, expectationOf, type Finding } from './reconcile-legs.ts';

const USDC = 'MintUSDC';
const same = (a: string, b: string) => a === b;

function row(over: Partial<LedgerRedemption> = {}, meta: Record<string, unknown> = {}): LedgerRedemption {
  return {
    id: 'rdm_1',
    chain: 'solana',
    network: 'mainnet',
    txId: 'TX1',
    nonce: 'nonce-1',
    payer: 'PAYER',
    state: 'delivered',
    createdAtMs: 1,
    projectId: 'prj_1',
    endpointId: 'ep_1',
    amount: 22_000n,
    fee: 2_000n,
    refundState: null,
    meta: JSON.stringify({
      subject: 'ep:ep_1',
      price: '20000',
      fee: '2000',
      splits: [
        { recipientType: 'provider', payTo: 'PROVIDER', amount: '20000' },
        { recipientType: 'platform', payTo: 'PLATFORM', amount: '2000' },
      ],
      ...meta,
    }),
    ...over,
  };
}

/** What the chain's normalizer makes of a clean payment of these legs. */
function tx(legs: Record<string, bigint>, over: Partial<ObservedTransaction> = {}): ObservedTransaction {
  const total = Object.values(legs).reduce((s, a) => s + a, 0n);
  return {
    id: 'TX1',
    final: true,
    success: true,
    timeMs: 1,
    signers: ['PAYER'],
    assetAuthorities: ['PAYER'],
    deltas: [
      { owner: 'PAYER', asset: USDC, delta: -total },
      ...Object.entries(legs).map(([owner, delta]) => ({ owner, asset: USDC, delta })),
    ],
    memos: [memoForNonce('nonce-1')],
    ...over,
  };
}

const codes = (f: Finding[]) => f.map((x) => x.code);

function check(r: LedgerRedemption, t: ObservedTransaction | null): Finding[] {
  const { expectation, findings } = expectationOf(r, 'PLATFORM');
  return [...findings, ...compareTransaction(expectation!, t, USDC, same)];
}

describe('reconciling a v1 payment leg by leg', () => {
  const paid = { PROVIDER: 20_000n, PLATFORM: 2_000n };

  it('finds nothing when every split arrived exactly and the columns agree with meta', () => {
    expect(check(row(), tx(paid))).toEqual([]);
  });

  it('names a leg paid short, a leg missing and a leg the ledger does not name', () => {
    expect(codes(check(row(), tx({ PROVIDER: 19_999n, PLATFORM: 2_000n })))).toEqual([
      'leg_amount_mismatch',
      'gross_mismatch',
    ]);
    expect(codes(check(row(), tx({ PROVIDER: 20_000n })))).toEqual(['leg_missing', 'gross_mismatch']);
    const extra = check(row(), tx({ ...paid, STRANGER: 5n }));
    expect(codes(extra)).toEqual(['leg_extra', 'gross_mismatch']);
    expect(extra[0]!.message).toContain('STRANGER received 0.000005 USDC');
  });

  it('finds an altered gross column, fee column, split amount or recipient', () => {
    expect(codes(check(row({ amount: 23_000n }), tx(paid)))).toEqual([
      'ledger_gross_mismatch',
      'gross_mismatch',
    ]);
    expect(codes(check(row({ fee: 1n }), tx(paid)))).toEqual(['ledger_fee_mismatch']);
    const split = row(
      {},
      {
        splits: [
          { recipientType: 'provider', payTo: 'PROVIDER', amount: '21000' },
          { recipientType: 'platform', payTo: 'PLATFORM', amount: '2000' },
        ],
      },
    );
    expect(codes(check(split, tx(paid)))).toEqual(['ledger_gross_mismatch', 'leg_amount_mismatch']);
    const moved = row(
      {},
      {
        splits: [
          { recipientType: 'provider', payTo: 'SOMEONE', amount: '20000' },
          { recipientType: 'platform', payTo: 'PLATFORM', amount: '2000' },
        ],
      },
    );
    expect(codes(check(moved, tx(paid)))).toEqual(['leg_missing', 'leg_extra']);
  });

  it('finds a transaction the chain does not know, one that failed, another payer, a missing memo, another asset', () => {
    expect(codes(check(row(), null))).toEqual(['tx_not_found']);
    expect(codes(check(row(), tx(paid, { success: false })))).toEqual(['tx_failed']);
    expect(codes(check(row({ payer: 'OTHER' }), tx(paid)))).toEqual([
      'payer_not_signer',
      'payer_debit_mismatch',
    ]);
    expect(codes(check(row(), tx(paid, { memos: ['tollgate:v1:another'] })))).toEqual(['memo_missing']);
    const otherAsset = tx(paid);
    otherAsset.deltas = otherAsset.deltas.map((d) => ({ ...d, asset: 'FAKE' }));
    expect(codes(check(row(), otherAsset))).toEqual([
      'wrong_asset',
      'leg_missing',
      'leg_missing',
      'gross_mismatch',
    ]);
    expect(codes(check(row(), tx(paid, { id: 'TX2' })))).toEqual(['tx_id_mismatch']);
    // Below the required finality the normalizer fills nothing in: no leg is compared.
    expect(codes(check(row(), tx(paid, { final: false, signers: [], deltas: [], memos: [] })))).toEqual([
      'tx_not_final',
    ]);
  });

  it('sums splits to one wallet, and counts a payer paying itself on its debit', () => {
    const twoToOne = row(
      { amount: 3n, fee: 1n },
      {
        fee: '1',
        splits: [
          { recipientType: 'provider', payTo: 'SAME', amount: '2' },
          { recipientType: 'platform', payTo: 'SAME', amount: '1' },
        ],
      },
    );
    expect(check(twoToOne, tx({ SAME: 3n }))).toEqual([]);
    const selfPaid = row(
      {},
      {
        splits: [
          { recipientType: 'provider', payTo: 'PAYER', amount: '20000' },
          { recipientType: 'platform', payTo: 'PLATFORM', amount: '2000' },
        ],
      },
    );
    const t = tx({ PLATFORM: 2_000n });
    expect(check(selfPaid, t)).toEqual([]);
  });

  it('reports an unreadable meta instead of guessing', () => {
    const { expectation, findings } = expectationOf(row({ meta: '{"splits":[]}' }), null);
    expect(expectation).toBeNull();
    expect(codes(findings)).toEqual(['ledger_unreadable']);
  });
});

describe('reconciling a v2 payment', () => {
  const v2 = row({}, { x402Version: 2 });
  const payable = (over: Partial<Payable> = {}): Payable => ({
    id: 'pay_1',
    redemptionId: 'rdm_1',
    projectId: 'prj_1',
    chain: 'solana',
    network: 'mainnet',
    recipient: 'PROVIDER',
    amount: 20_000n,
    createdAtMs: 1,
    state: 'pending',
    payoutId: null,
    payoutTx: null,
    paidAtMs: null,
    ...over,
  });

  it('expects the whole amount at the platform and the provider share as a payable', () => {
    const { expectation } = expectationOf(v2, null);
    expect(expectation).toMatchObject({ legs: [{ recipient: 'PLATFORM', amount: 22_000n }], x402Version: 2 });
    expect(compareTransaction(expectation!, tx({ PLATFORM: 22_000n }), USDC, same)).toEqual([]);
    expect(comparePayable(expectation!, v2, payable())).toEqual([]);
    expect(codes(comparePayable(expectation!, v2, null))).toEqual(['payable_missing']);
    expect(codes(comparePayable(expectation!, v2, payable({ amount: 1n })))).toEqual(['payable_mismatch']);
    expect(codes(comparePayable(expectation!, v2, payable({ recipient: 'X' })))).toEqual([
      'payable_mismatch',
    ]);
  });

  it('finds a v2 payment that paid the splits instead of the platform', () => {
    expect(codes(check(v2, tx({ PROVIDER: 20_000n, PLATFORM: 2_000n })))).toEqual([
      'leg_amount_mismatch',
      'leg_extra',
    ]);
  });
});
