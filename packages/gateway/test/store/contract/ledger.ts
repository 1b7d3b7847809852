import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ClaimInput, Store } from '../../../src/store/store.ts';

const T0 = 1_800_000_000_000;
/** Above 2^53: a float anywhere on the way would change it. */
const BIG = 2n ** 53n + 1n;

function claim(nowMs: number, over: Partial<ClaimInput> = {}): ClaimInput {
  return {
    chain: 'solana',
    network: 'localnet',
    txId: `tx_${randomBytes(8).toString('hex')}`,
    nonce: `n_${randomBytes(8).toString('hex')}`,
    requestHash: 'a'.repeat(64),
    requirementId: 'req',
    payer: 'Payer1',
    meta: { fee: '1000', splits: [{ recipientType: 'platform', payTo: 'P', amount: String(BIG) }] },
    projectId: null,
    endpointId: null,
    amount: BIG,
    fee: 1000n,
    nowMs,
    leaseMs: 1000,
    ...over,
  };
}

export function ledgerContract(get: () => Store): void {
  describe('ledger (reconciliation reads)', () => {
    it('lists the redemptions of a time range oldest first with their meta, page by page', async () => {
      const s = get();
      const inRange = [];
      await s.redemptions.claim(claim(T0 - 1));
      for (let i = 0; i < 5; i++) {
        const c = claim(T0 + (i < 2 ? 0 : i), i === 4 ? { chain: 'sui', payer: '0xabc' } : {});
        await s.redemptions.claim(c);
        inRange.push(c);
      }
      await s.redemptions.claim(claim(T0 + 10));

      const first = await s.ledger.redemptions({ fromMs: T0, toMs: T0 + 10, limit: 3 });
      expect(first).toHaveLength(3);
      const last = first.at(-1)!;
      const rest = await s.ledger.redemptions({
        fromMs: T0,
        toMs: T0 + 10,
        limit: 3,
        after: { createdAtMs: last.createdAtMs, id: last.id },
      });
      const all = [...first, ...rest];
      expect(all.map((r) => r.txId).sort()).toEqual(inRange.map((c) => c.txId).sort());
      expect(new Set(all.map((r) => r.id)).size).toBe(5);
      expect(all.map((r) => r.createdAtMs)).toEqual([T0, T0, T0 + 2, T0 + 3, T0 + 4]);

      const sui = all.find((r) => r.chain === 'sui')!;
      expect(sui).toMatchObject({
        payer: '0xabc',
        network: 'localnet',
        amount: BIG,
        fee: 1000n,
        state: 'in_progress',
      });
      expect(JSON.parse(sui.meta)).toEqual({
        fee: '1000',
        splits: [{ recipientType: 'platform', payTo: 'P', amount: String(BIG) }],
      });
      expect(
        (await s.ledger.redemptions({ fromMs: T0, toMs: T0 + 10, chain: 'sui', limit: 10 })).map((r) => r.id),
      ).toEqual([sui.id]);
    });

    it('lists the payouts that recorded a transaction in a time range', async () => {
      const s = get();
      const begun = await s.payables.beginPayout({
        chain: 'sui',
        network: 'localnet',
        nowMs: T0,
        leaseMs: 60_000,
      });
      if (begun.kind !== 'begun') throw new Error(begun.kind);
      expect(await s.ledger.payouts({ fromMs: T0, toMs: T0 + 1 })).toEqual([]);
      const hold = { id: begun.payout.id, attempt: begun.payout.attempt };
      await s.payables.recordPayoutSent(hold, { tx: 'TXP', txBytes: 'bytes', txExpiry: null, nowMs: T0 });
      expect(await s.ledger.payouts({ fromMs: T0, toMs: T0 + 1 })).toMatchObject([
        { id: begun.payout.id, chain: 'sui', tx: 'TXP', state: 'sent' },
      ]);
      expect(await s.ledger.payouts({ fromMs: T0, toMs: T0 + 1, chain: 'solana' })).toEqual([]);
      expect(await s.ledger.payouts({ fromMs: T0 + 1, toMs: T0 + 2 })).toEqual([]);
    });
  });
}
