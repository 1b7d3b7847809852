import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ObservedTransaction, VerifyInput } from './chain.ts';
import { decide, verifierFrom } from './chain.ts';

const ASSET = 'usdc';
const PAYER = 'payer';
const same = (a: string, b: string) => a === b;

function input(over: Partial<VerifyInput> = {}): VerifyInput {
  return {
    option: {
      chain: 'solana',
      network: 'localnet',
      asset: ASSET,
      memo: 'm',
      splits: [
        { recipientType: 'provider', payTo: 'prov', amount: 90n },
        { recipientType: 'platform', payTo: 'plat', amount: 10n },
      ],
    },
    issuedAtMs: 1_000_000,
    expiresAtMs: 1_300_000,
    skewMs: 30_000,
    payer: PAYER,
    txHashOrDigest: 'tx',
    ...over,
  };
}

function tx(over: Partial<ObservedTransaction> = {}): ObservedTransaction {
  return {
    id: 'tx',
    final: true,
    success: true,
    timeMs: 1_100_000,
    signers: [PAYER],
    assetAuthorities: [PAYER],
    deltas: [
      { owner: PAYER, asset: ASSET, delta: -100n },
      { owner: 'prov', asset: ASSET, delta: 90n },
      { owner: 'plat', asset: ASSET, delta: 10n },
    ],
    memos: ['m'],
    ...over,
  };
}

describe('decide', () => {
  it('verifies an exact payment and reports what each payee got', () => {
    expect(decide(input(), tx(), same)).toEqual({
      status: 'verified',
      timeMs: 1_100_000,
      legs: [
        { owner: 'prov', delta: 90n },
        { owner: 'plat', delta: 10n },
      ],
    });
  });

  it.each<[string, Partial<ObservedTransaction>, string]>([
    ['another authority moved the asset', { assetAuthorities: [PAYER, 'someone'] }, 'payer_not_authority'],
    ['an unreadable authority', { assetAuthorities: ['<unknown>'] }, 'payer_not_authority'],
    ['no movement at all', { deltas: [] }, 'amount_mismatch'],
    ['the payer not signing', { signers: ['other'] }, 'payer_not_signer'],
  ])('rejects %s', (_name, over, reason) => {
    expect(decide(input(), tx(over), same)).toEqual({ status: 'rejected', reason });
  });

  it('refuses a transaction named by another id than its own (e.g. a second Solana signature)', () => {
    expect(decide(input({ txHashOrDigest: 'second-signature' }), tx({ id: 'tx' }), same)).toEqual({
      status: 'rejected',
      reason: 'transaction_id_not_canonical',
    });
  });

  it('reports an otherwise good transaction whose on-chain time is unknown as pending, not refused', () => {
    expect(decide(input(), tx({ timeMs: null }), same)).toEqual({ status: 'pending', reason: 'not_final' });
  });

  it('still refuses what is wrong with a transaction whose time is unknown', () => {
    expect(decide(input(), tx({ timeMs: null, memos: [] }), same)).toEqual({
      status: 'rejected',
      reason: 'memo_missing',
    });
  });

  it('requires the sum when two splits name the same wallet', () => {
    const both = input({
      option: {
        ...input().option,
        splits: [
          { recipientType: 'provider', payTo: 'x', amount: 90n },
          { recipientType: 'platform', payTo: 'x', amount: 10n },
        ],
      },
    });
    const paid = (delta: bigint) => tx({ deltas: [{ owner: 'x', asset: ASSET, delta }] });
    expect(decide(both, paid(99n), same)).toEqual({ status: 'rejected', reason: 'amount_mismatch' });
    expect(decide(both, paid(100n), same).status).toBe('verified');
  });

  it('never verifies unless every payee got its share in the asset, once-memo, payer-only, in time', () => {
    const owners = fc.constantFrom('prov', 'plat', PAYER, 'eve');
    const observed = fc.record({
      id: fc.oneof(
        { arbitrary: fc.constant('tx'), weight: 4 },
        { arbitrary: fc.constant('tx-other-signature'), weight: 1 },
      ),
      final: fc.boolean(),
      success: fc.boolean(),
      // The window is [issued - skew, expires + skew]: its edges and one ms past them.
      timeMs: fc.constantFrom(null, 969_999, 970_000, 1_100_000, 1_330_000, 1_330_001),
      signers: fc.subarray([PAYER, 'eve']),
      assetAuthorities: fc.subarray([PAYER, 'eve', '<unknown>']),
      // The exact legs, some of them, plus noise around them: verified and near-miss cases both occur.
      deltas: fc
        .tuple(
          fc.subarray(tx().deltas),
          fc.array(
            fc.record({
              owner: owners,
              asset: fc.constantFrom(ASSET, 'other'),
              delta: fc.bigInt({ min: -2n, max: 2n }),
            }),
            { maxLength: 4 },
          ),
        )
        .map(([exact, noise]) => [...exact, ...noise]),
      memos: fc.array(fc.constantFrom('m', 'n'), { maxLength: 3 }),
    });
    let verified = 0;
    fc.assert(
      fc.property(observed, (o) => {
        const t: ObservedTransaction = o;
        const v = decide(input(), t, same);
        if (v.status !== 'verified') return;
        verified++;
        const got = (owner: string) =>
          t.deltas.filter((d) => d.owner === owner && d.asset === ASSET).reduce((s, d) => s + d.delta, 0n);
        expect(t.id).toBe('tx');
        expect(t.final && t.success).toBe(true);
        expect(t.signers).toContain(PAYER);
        expect(t.assetAuthorities.every((a) => a === PAYER)).toBe(true);
        expect(t.memos.filter((m) => m === 'm')).toHaveLength(1);
        expect(got('prov')).toBeGreaterThanOrEqual(90n);
        expect(got('plat')).toBeGreaterThanOrEqual(10n);
        expect(t.timeMs).not.toBeNull();
        expect(t.timeMs!).toBeGreaterThanOrEqual(970_000);
        expect(t.timeMs!).toBeLessThanOrEqual(1_330_000);
      }),
      { numRuns: 10_000 },
    );
    expect(verified).toBeGreaterThan(0);
  });
});

describe('verifierFrom', () => {
  it('reports a transaction the source does not have as pending, and decides the rest', async () => {
    const found = new Map([['tx', tx()]]);
    const v = verifierFrom({
      chain: 'solana',
      network: 'localnet',
      fetch: async (id) => found.get(id) ?? null,
      sameAsset: same,
    });
    expect([v.chain, v.network]).toEqual(['solana', 'localnet']);
    expect(await v.verify(input({ txHashOrDigest: 'nope' }))).toEqual({
      status: 'pending',
      reason: 'not_found',
    });
    expect((await v.verify(input())).status).toBe('verified');
  });
});
