import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { NewPayable, PayoutHold, Store } from '../../../src/store/store.ts';
import { project } from './fixtures.ts';

const T0 = 1_800_000_000_000;
const LEASE = 60_000;
/** Above 2^53: a float anywhere on the way would change these sums. */
const BIG = 2n ** 53n + 1n;

function payable(overrides: Partial<NewPayable> = {}): NewPayable {
  return {
    redemptionId: `rdm_${randomBytes(8).toString('hex')}`,
    projectId: 'prj_x',
    chain: 'solana',
    network: 'localnet',
    recipient: 'ProviderA',
    amount: 10_000n,
    nowMs: T0,
    ...overrides,
  };
}

const hold = (p: { id: string; attempt: number }): PayoutHold => ({ id: p.id, attempt: p.attempt });

async function begun(s: Store, nowMs = T0, chain: 'solana' | 'sui' = 'solana') {
  const r = await s.payables.beginPayout({ chain, network: 'localnet', nowMs, leaseMs: LEASE });
  if (r.kind !== 'begun') throw new Error(`expected begun, got ${r.kind}`);
  return r.payout;
}

export function payableContract(get: () => Store): void {
  describe('payables', () => {
    it('records a payable once per redemption and returns the first row again', async () => {
      const s = get();
      const p = await project(s, 'payee');
      const input = payable({ projectId: p.id, amount: BIG });
      const first = await s.payables.record(input);
      expect(first).toMatchObject({
        redemptionId: input.redemptionId,
        projectId: p.id,
        chain: 'solana',
        network: 'localnet',
        recipient: 'ProviderA',
        amount: BIG,
        createdAtMs: T0,
        state: 'pending',
        payoutId: null,
        payoutTx: null,
        paidAtMs: null,
      });
      // The same redemption again, even with other values: no second row, the first one back.
      const again = await s.payables.record({ ...input, amount: 5n, recipient: 'Other', nowMs: T0 + 9 });
      expect(again).toEqual(first);
      expect(await s.payables.byRedemption(input.redemptionId)).toEqual(first);
      expect(await s.payables.pending({ chain: 'solana', network: 'localnet', limit: 100 })).toEqual([first]);
      expect(await s.payables.byRedemption('rdm_unknown')).toBeNull();
    });

    it('keeps one row when 30 callers record the same redemption at once', async () => {
      const s = get();
      const input = payable();
      const rows = await Promise.all(Array.from({ length: 30 }, () => s.payables.record(input)));
      expect(new Set(rows.map((r) => r.id)).size).toBe(1);
      expect(await s.payables.pending({ chain: 'solana', network: 'localnet', limit: 100 })).toHaveLength(1);
    });

    it('refuses amounts that are not positive', async () => {
      const s = get();
      await expect(s.payables.record(payable({ amount: 0n }))).rejects.toThrow(RangeError);
      await expect(s.payables.record(payable({ amount: -1n }))).rejects.toThrow(RangeError);
    });

    it('lists and groups pending payables per chain and network, oldest debt first', async () => {
      const s = get();
      await s.payables.record(payable({ recipient: 'B', amount: BIG, nowMs: T0 + 1 }));
      await s.payables.record(payable({ recipient: 'A', amount: 3n, nowMs: T0 + 2 }));
      await s.payables.record(payable({ recipient: 'B', amount: BIG, nowMs: T0 + 3 }));
      await s.payables.record(payable({ recipient: 'C', amount: 7n, nowMs: T0 + 2 }));
      await s.payables.record(payable({ recipient: 'A', amount: 1n, chain: 'sui' }));
      await s.payables.record(payable({ recipient: 'A', amount: 1n, network: 'mainnet' }));

      const q = { chain: 'solana' as const, network: 'localnet', limit: 100 };
      const listed = await s.payables.pending(q);
      expect(listed.map((p) => [p.recipient, p.createdAtMs])).toEqual([
        ['B', T0 + 1],
        ['A', T0 + 2],
        ['C', T0 + 2],
        ['B', T0 + 3],
      ]);
      expect(await s.payables.pending({ ...q, limit: 2 })).toHaveLength(2);
      expect(await s.payables.pendingByRecipient(q)).toEqual([
        { recipient: 'B', amount: 2n * BIG, count: 2 },
        { recipient: 'A', amount: 3n, count: 1 },
        { recipient: 'C', amount: 7n, count: 1 },
      ]);
      expect(await s.payables.pendingByRecipient({ ...q, limit: 1 })).toEqual([
        { recipient: 'B', amount: 2n * BIG, count: 2 },
      ]);
      expect(await s.payables.pendingByRecipient({ ...q, chain: 'sui' })).toEqual([
        { recipient: 'A', amount: 1n, count: 1 },
      ]);
    });

    it('marks a payable paid exactly once, also when two payouts race for it', async () => {
      const s = get();
      const rows = await Promise.all(Array.from({ length: 10 }, () => s.payables.record(payable())));
      const ids = rows.map((r) => r.id);
      const [a, b] = await Promise.all([
        s.payables.markPaid(ids, { payoutId: 'pout_a', tx: 'tx-a', nowMs: T0 + 5 }),
        s.payables.markPaid(ids, { payoutId: 'pout_b', tx: 'tx-b', nowMs: T0 + 6 }),
      ]);
      expect([...a, ...b].sort()).toEqual([...ids].sort());
      expect(a.filter((id) => b.includes(id))).toEqual([]);
      const winner = a.length > 0 ? { payoutId: 'pout_a', tx: 'tx-a' } : { payoutId: 'pout_b', tx: 'tx-b' };
      if (a.length > 0 && b.length > 0) {
        // Both may win some rows; each row names the payout that marked it.
        for (const id of ids) {
          const p = await s.payables.byRedemption(rows.find((r) => r.id === id)!.redemptionId);
          expect(p!.payoutTx).toBe(a.includes(id) ? 'tx-a' : 'tx-b');
        }
      } else {
        expect(await s.payables.byPayout(winner.payoutId)).toHaveLength(10);
      }
      expect(await s.payables.markPaid(ids, { payoutId: 'pout_c', tx: 'tx-c', nowMs: T0 + 7 })).toEqual([]);
      expect(await s.payables.pending({ chain: 'solana', network: 'localnet', limit: 100 })).toEqual([]);
      const one = await s.payables.byRedemption(rows[0]!.redemptionId);
      expect(one).toMatchObject({ state: 'paid' });
      expect([T0 + 5, T0 + 6]).toContain(one!.paidAtMs);
      expect(await s.payables.markPaid([], { payoutId: 'x', tx: 'y', nowMs: T0 })).toEqual([]);
    });

    it('sums a project exactly per chain and network, pending apart from paid', async () => {
      const s = get();
      const p = await project(s, 'sums');
      const other = await project(s, 'other');
      const r1 = await s.payables.record(payable({ projectId: p.id, amount: BIG }));
      await s.payables.record(payable({ projectId: p.id, amount: BIG }));
      await s.payables.record(payable({ projectId: p.id, amount: 1n }));
      await s.payables.record(payable({ projectId: p.id, amount: 5n, chain: 'sui' }));
      await s.payables.record(payable({ projectId: other.id, amount: 1_000n }));
      await s.payables.markPaid([r1.id], { payoutId: 'pout_1', tx: 'tx-1', nowMs: T0 });

      expect(await s.payables.summary(p.id)).toEqual([
        { chain: 'solana', network: 'localnet', pending: BIG + 1n, paid: BIG },
        { chain: 'sui', network: 'localnet', pending: 5n, paid: 0n },
      ]);
      expect(await s.payables.summary('prj_none')).toEqual([]);
      // Deleting the project does not forgive the debt.
      await s.projects.delete(p.id);
      expect((await s.payables.summary(p.id))[0]!.pending).toBe(BIG + 1n);
    });

    it('lets one payout per chain and network hold the lock, across 20 concurrent runs', async () => {
      const s = get();
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          s.payables.beginPayout({ chain: 'solana', network: 'localnet', nowMs: T0, leaseMs: LEASE }),
        ),
      );
      const kinds = results.map((r) => r.kind).sort();
      expect(kinds.filter((k) => k === 'begun')).toHaveLength(1);
      expect(kinds.filter((k) => k === 'busy')).toHaveLength(19);
      const payout = results.find((r) => r.kind === 'begun')!.payout;
      expect(payout).toMatchObject({ state: 'open', attempt: 1, leaseUntilMs: T0 + LEASE, tx: null });
      expect(await s.payables.unfinishedPayout('solana', 'localnet')).toEqual(payout);
      // Another chain has its own lock.
      await begun(s, T0, 'sui');
    });

    it('takes over a lapsed payout once and fences the old holder off', async () => {
      const s = get();
      const first = await begun(s);
      expect(await s.payables.renewPayout(hold(first), T0 + 2 * LEASE, T0 + 1)).toBe(true);
      const busy = await s.payables.beginPayout({
        chain: 'solana',
        network: 'localnet',
        nowMs: T0 + LEASE + 1,
        leaseMs: LEASE,
      });
      expect(busy.kind).toBe('busy');

      const later = T0 + 2 * LEASE + 1;
      const takers = await Promise.all(
        Array.from({ length: 10 }, () =>
          s.payables.beginPayout({ chain: 'solana', network: 'localnet', nowMs: later, leaseMs: LEASE }),
        ),
      );
      expect(takers.filter((r) => r.kind === 'recover')).toHaveLength(1);
      expect(takers.filter((r) => r.kind === 'busy')).toHaveLength(9);
      const taken = takers.find((r) => r.kind === 'recover')!.payout;
      expect(taken).toMatchObject({ id: first.id, attempt: 2, leaseUntilMs: later + LEASE });

      await s.payables.record(payable({ recipient: 'A' }));
      const stale = hold(first);
      expect(await s.payables.renewPayout(stale, later + 10 * LEASE, later)).toBe(false);
      expect(await s.payables.assignToPayout(stale, { recipients: ['A'], nowMs: later })).toBeNull();
      expect(
        await s.payables.recordPayoutSent(stale, { tx: 't', txBytes: 'b', txExpiry: null, nowMs: later }),
      ).toBe(false);
      expect(await s.payables.settlePayout(stale, later)).toBeNull();
      expect(await s.payables.failPayout(stale, 'x', later)).toBeNull();
      expect((await s.payables.pending({ chain: 'solana', network: 'localnet', limit: 10 }))[0]!.state).toBe(
        'pending',
      );
      expect(await s.payables.failPayout(hold(taken), 'abandoned', later)).toEqual({ released: 0 });
    });

    it('runs a payout: assign, record the transaction, settle', async () => {
      const s = get();
      const a1 = await s.payables.record(payable({ recipient: 'A', amount: BIG }));
      const a2 = await s.payables.record(payable({ recipient: 'A', amount: 2n }));
      const b1 = await s.payables.record(payable({ recipient: 'B', amount: 4n }));
      const c1 = await s.payables.record(payable({ recipient: 'C', amount: 8n }));
      const onSui = await s.payables.record(payable({ recipient: 'A', amount: 16n, chain: 'sui' }));

      const payout = await begun(s);
      const due = await s.payables.assignToPayout(hold(payout), { recipients: ['A', 'B'], nowMs: T0 + 1 });
      expect(due).toEqual([
        { recipient: 'A', amount: BIG + 2n, count: 2 },
        { recipient: 'B', amount: 4n, count: 1 },
      ]);
      expect((await s.payables.byPayout(payout.id)).map((p) => [p.id, p.state])).toEqual(
        [
          [a1.id, 'paying'],
          [a2.id, 'paying'],
          [b1.id, 'paying'],
        ].sort((x, y) => (x[0]! < y[0]! ? -1 : 1)),
      );
      // A 'paying' row belongs to its payout: no other payout can mark it.
      expect(await s.payables.markPaid([a1.id], { payoutId: 'pout_other', tx: 'tx-x', nowMs: T0 })).toEqual(
        [],
      );
      expect(
        await s.payables.pendingByRecipient({ chain: 'solana', network: 'localnet', limit: 10 }),
      ).toEqual([{ recipient: 'C', amount: 8n, count: 1 }]);

      expect(await s.payables.settlePayout(hold(payout), T0 + 2)).toBeNull(); // nothing recorded as sent yet
      expect(
        await s.payables.recordPayoutSent(hold(payout), {
          tx: 'sig-1',
          txBytes: 'AQID',
          txExpiry: '1150',
          nowMs: T0 + 2,
        }),
      ).toBe(true);
      expect(await s.payables.payout(payout.id)).toMatchObject({
        state: 'sent',
        tx: 'sig-1',
        txBytes: 'AQID',
        txExpiry: '1150',
      });
      expect(await s.payables.assignToPayout(hold(payout), { recipients: ['C'], nowMs: T0 + 3 })).toBeNull();

      expect(await s.payables.settlePayout(hold(payout), T0 + 4)).toEqual({ paid: 3 });
      expect(await s.payables.settlePayout(hold(payout), T0 + 5)).toBeNull();
      for (const p of await s.payables.byPayout(payout.id)) {
        expect(p).toMatchObject({ state: 'paid', payoutId: payout.id, payoutTx: 'sig-1', paidAtMs: T0 + 4 });
      }
      expect(await s.payables.payout(payout.id)).toMatchObject({ state: 'paid' });
      expect(await s.payables.unfinishedPayout('solana', 'localnet')).toBeNull();
      expect((await s.payables.byRedemption(c1.redemptionId))!.state).toBe('pending');
      expect((await s.payables.byRedemption(onSui.redemptionId))!.state).toBe('pending');
      // The lock is free again.
      await begun(s, T0 + 6);
    });

    it('gives the rows of a failed payout back to pending', async () => {
      const s = get();
      const a = await s.payables.record(payable({ recipient: 'A', amount: 3n }));
      const payout = await begun(s);
      await s.payables.assignToPayout(hold(payout), { recipients: ['A'], nowMs: T0 });
      await s.payables.recordPayoutSent(hold(payout), { tx: 'sig', txBytes: 'x', txExpiry: null, nowMs: T0 });
      expect(await s.payables.failPayout(hold(payout), 'expired without landing', T0 + 1)).toEqual({
        released: 1,
      });
      expect(await s.payables.payout(payout.id)).toMatchObject({
        state: 'failed',
        error: 'expired without landing',
      });
      expect(await s.payables.byRedemption(a.redemptionId)).toMatchObject({
        state: 'pending',
        payoutId: null,
        payoutTx: null,
      });
      expect(await s.payables.unfinishedPayout('solana', 'localnet')).toBeNull();
    });
  });
}
