import { describe, expect, it } from 'vitest';
import type { ClaimInput, Redemption, RefundHold, Store } from '../../../src/store/store.ts';
import { claimInput } from './redemptions.ts';

const T0 = 1_800_000_000_000;
const LEASE = 30_000;
const LATER = T0 + 3_600_000;
/** Above 2^53: a float anywhere on the way would change it. */
const BIG = 2n ** 53n + 7n;

const response = { status: 200, headers: {}, body: new Uint8Array([1]) };

function v1(overrides: Partial<ClaimInput> = {}): ClaimInput {
  return claimInput({
    amount: 11_000n,
    fee: 1_000n,
    meta: {
      splits: [
        { recipientType: 'provider', payTo: 'Prov', amount: '10000' },
        { recipientType: 'platform', payTo: 'Plat', amount: '1000' },
      ],
    },
    ...overrides,
  });
}

const v2 = (overrides: Partial<ClaimInput> = {}) =>
  v1({
    meta: { x402Version: 2, splits: [{ recipientType: 'platform', payTo: 'Plat', amount: '11000' }] },
    ...overrides,
  });

async function claimed(s: Store, input: ClaimInput): Promise<Redemption> {
  const r = await s.redemptions.claim(input);
  if (r.kind !== 'claimed') throw new Error(`expected claimed, got ${r.kind}`);
  return r.redemption;
}

/** A paid request whose upstream failed: released, retryable, not delivered. */
async function undelivered(s: Store, input: ClaimInput = v1()): Promise<Redemption> {
  const r = await claimed(s, input);
  expect(await s.redemptions.release(r.id, r.attempt, { failed: true })).toBe(true);
  return r;
}

const begin = (s: Store, redemptionId: string, nowMs = LATER) =>
  s.refunds.begin({ redemptionId, nowMs, undeliveredBeforeMs: nowMs - 60_000, leaseMs: LEASE });

async function begun(s: Store, redemptionId: string, nowMs = LATER) {
  const r = await begin(s, redemptionId, nowMs);
  if (r.kind !== 'begun') throw new Error(`expected begun, got ${JSON.stringify(r)}`);
  return r.refund;
}

const hold = (r: RefundHold): RefundHold => ({ id: r.id, attempt: r.attempt });

export function refundContract(get: () => Store): void {
  describe('refunds', () => {
    it('lists undelivered payments past the window, oldest first, and begins a refund with exact amounts', async () => {
      const s = get();
      const a = await undelivered(s, v1({ amount: BIG, fee: 1n, nowMs: T0 + 1 }));
      const b = await undelivered(s, v1({ chain: 'sui', nowMs: T0 }));
      const young = await undelivered(s, v1({ nowMs: LATER - 1 }));
      const done = await claimed(s, v1({ nowMs: T0 }));
      await s.redemptions.complete(done.id, done.attempt, response, T0 + 5);

      const listed = await s.refunds.undelivered({ createdBeforeMs: LATER - 60_000, limit: 100 });
      expect(listed.map((p) => p.id)).toEqual([b.id, a.id]);
      expect(listed[1]).toMatchObject({
        amount: BIG,
        fee: 1n,
        payer: 'PayerAddr',
        x402Version: 1,
        state: 'retryable',
      });
      expect(
        (await s.refunds.undelivered({ createdBeforeMs: LATER, chain: 'sui', limit: 100 })).map((p) => p.id),
      ).toEqual([b.id]);
      expect(listed.map((p) => p.id)).not.toContain(young.id);

      const refund = await begun(s, a.id);
      expect(refund).toMatchObject({
        redemptionId: a.id,
        chain: 'solana',
        network: 'localnet',
        recipient: 'PayerAddr',
        amount: BIG,
        // A v1 payment paid the provider its split directly.
        providerKept: 10_000n,
        payableId: null,
        state: 'open',
        attempt: 1,
        leaseUntilMs: LATER + LEASE,
        tx: null,
        refundedAtMs: null,
      });
      expect((await s.refunds.candidate(a.id))?.refundState).toBe('refunding');
      expect(
        (await s.refunds.undelivered({ createdBeforeMs: LATER, limit: 100 })).map((p) => p.id),
      ).not.toContain(a.id);
    });

    it('refuses a delivered, a recent, a leased or an unknown payment, and leaves it claimable', async () => {
      const s = get();
      const done = await claimed(s, v1());
      await s.redemptions.complete(done.id, done.attempt, response, T0 + 5);
      expect(await begin(s, done.id)).toEqual({ kind: 'refused', reason: 'delivered' });

      const recent = await undelivered(s, v1({ nowMs: LATER - 1_000 }));
      expect(await begin(s, recent.id)).toEqual({ kind: 'refused', reason: 'in_window' });

      const leased = await claimed(s, v1());
      // The live lease of a paid attempt still running: it may deliver.
      await s.redemptions.renew(leased.id, leased.attempt, LATER + 10_000);
      expect(await begin(s, leased.id)).toEqual({ kind: 'refused', reason: 'leased' });
      expect(await begin(s, 'rdm_unknown')).toEqual({ kind: 'refused', reason: 'not_found' });

      for (const r of [recent, leased]) expect((await s.refunds.candidate(r.id))?.refundState).toBeNull();
      expect(await s.redemptions.complete(leased.id, leased.attempt, response, LATER)).toBe(true);
      expect(await s.refunds.byRedemption(leased.id)).toBeNull();
    });

    it('once begun, the payment can be neither claimed nor completed by a stale lease holder', async () => {
      const s = get();
      const input = v1();
      const stale = await claimed(s, input);
      // The holder's lease lapsed (its process hung): the refund may begin.
      await begun(s, stale.id, T0 + LEASE + 60_000 + 1);
      expect(await s.redemptions.complete(stale.id, stale.attempt, response, LATER)).toBe(false);
      expect(await s.redemptions.release(stale.id, stale.attempt)).toBe(false);
      expect(await s.redemptions.renew(stale.id, stale.attempt, LATER + 1)).toBe(false);
      const again = await s.redemptions.claim({ ...input, nowMs: LATER + 1 });
      expect(again.kind).toBe('refunded');
      expect(await s.redemptions.byTx(input.chain, input.network, input.txId)).toMatchObject({
        state: 'in_progress',
        refundState: 'refunding',
      });
    });

    it('of two runs beginning the same refund at once, one wins', async () => {
      const s = get();
      const r = await undelivered(s);
      const results = await Promise.all(Array.from({ length: 10 }, () => begin(s, r.id)));
      expect(results.filter((x) => x.kind === 'begun')).toHaveLength(1);
      expect(new Set(results.filter((x) => x.kind !== 'begun').map((x) => x.kind))).toEqual(
        new Set(['busy']),
      );
      const refund = (await s.refunds.byRedemption(r.id))!;
      expect(refund.attempt).toBe(1);
    });

    it('of a refund and a late retry racing for the same payment, exactly one wins', async () => {
      const s = get();
      for (let i = 0; i < 5; i++) {
        const input = v1();
        const r = await undelivered(s, input);
        const [refund, claim] = await Promise.all([
          begin(s, r.id),
          s.redemptions.claim({ ...input, nowMs: LATER }),
        ]);
        expect([refund.kind === 'begun', claim.kind === 'claimed'].filter(Boolean)).toHaveLength(1);
        if (refund.kind === 'begun') expect(claim.kind).toBe('refunded');
        else expect(refund).toEqual({ kind: 'refused', reason: 'leased' });
      }
    });

    it('walks the protocol: recorded before sent, fenced by attempt, finished with the redemption', async () => {
      const s = get();
      const r = await undelivered(s);
      const first = await begun(s, r.id);
      expect(
        await s.refunds.recordSent(hold(first), {
          tx: 'sig-1',
          txBytes: 'bytes-1',
          txExpiry: '99',
          nowMs: LATER + 1,
        }),
      ).toBe(true);
      // Recorded once only.
      expect(
        await s.refunds.recordSent(hold(first), {
          tx: 'sig-2',
          txBytes: 'b',
          txExpiry: null,
          nowMs: LATER + 2,
        }),
      ).toBe(false);
      expect(await begin(s, r.id, LATER + 2)).toMatchObject({
        kind: 'busy',
        refund: { tx: 'sig-1', state: 'sent' },
      });
      expect((await s.refunds.unfinished({ chain: 'solana' })).map((x) => x.id)).toContain(first.id);

      // The run died; its lease lapsed; a second run takes over.
      const taken = await begin(s, r.id, LATER + LEASE + 10);
      expect(taken).toMatchObject({
        kind: 'recover',
        refund: { id: first.id, attempt: 2, state: 'sent', tx: 'sig-1', txBytes: 'bytes-1', txExpiry: '99' },
      });
      const second = (taken as { refund: RefundHold }).refund;
      // The first run, fenced off, changes nothing.
      expect(await s.refunds.finish(hold(first), LATER + LEASE + 11)).toBe(false);
      expect(await s.refunds.reopen(hold(first), 'stale', LATER + LEASE + 11)).toBe(false);
      expect(await s.refunds.renew(hold(first), LATER + LEASE * 3, LATER + LEASE + 11)).toBe(false);

      // The recorded transaction could not land: back to open, signed afresh.
      expect(await s.refunds.reopen(hold(second), 'expired', LATER + LEASE + 12)).toBe(true);
      expect(await s.refunds.byRedemption(r.id)).toMatchObject({
        state: 'open',
        tx: null,
        txBytes: null,
        error: 'expired',
        leaseUntilMs: 0,
      });
      const third = await begin(s, r.id, LATER + LEASE + 13);
      expect(third).toMatchObject({ kind: 'recover', refund: { attempt: 3, state: 'open' } });
      const h = hold((third as { refund: RefundHold }).refund);
      expect(await s.refunds.finish(h, LATER + LEASE + 14)).toBe(false); // nothing sent yet
      expect(
        await s.refunds.recordSent(h, {
          tx: 'sig-3',
          txBytes: 'bytes-3',
          txExpiry: null,
          nowMs: LATER + LEASE + 14,
        }),
      ).toBe(true);
      expect(await s.refunds.finish(h, LATER + LEASE + 15)).toBe(true);

      expect(await s.refunds.byRedemption(r.id)).toMatchObject({
        state: 'refunded',
        tx: 'sig-3',
        refundedAtMs: LATER + LEASE + 15,
        error: null,
      });
      expect((await s.refunds.candidate(r.id))?.refundState).toBe('refunded');
      expect(await begin(s, r.id, LATER + LEASE * 9)).toMatchObject({
        kind: 'refunded',
        refund: { tx: 'sig-3' },
      });
      expect((await s.refunds.unfinished({})).map((x) => x.id)).not.toContain(first.id);
    });

    it("cancels a v2 payment's pending payable, refuses while a payout holds it, and counts a paid one as kept", async () => {
      const s = get();
      const payable = (redemptionId: string) => ({
        redemptionId,
        projectId: 'prj_1',
        chain: 'solana' as const,
        network: 'localnet',
        recipient: 'Prov',
        amount: 9_900n,
        nowMs: T0,
      });
      const pending = await undelivered(s, v2());
      const p = await s.payables.record(payable(pending.id));
      const refund = await begun(s, pending.id);
      expect(refund).toMatchObject({ amount: 11_000n, providerKept: 0n, payableId: p.id });
      expect((await s.payables.byRedemption(pending.id))?.state).toBe('cancelled');
      expect(
        await s.payables.pendingByRecipient({ chain: 'solana', network: 'localnet', limit: 10 }),
      ).toEqual([]);
      expect(await s.payables.summary('prj_1')).toEqual([]);

      // A payable assigned to an unfinished payout: the refund waits, and nothing changed.
      const paying = await undelivered(s, v2());
      await s.payables.record(payable(paying.id));
      const lock = await s.payables.beginPayout({
        chain: 'solana',
        network: 'localnet',
        nowMs: LATER,
        leaseMs: LEASE,
      });
      if (lock.kind !== 'begun') throw new Error(lock.kind);
      await s.payables.assignToPayout(lock.payout, { recipients: ['Prov'], nowMs: LATER });
      expect(await begin(s, paying.id)).toEqual({ kind: 'refused', reason: 'payout_in_progress' });
      expect((await s.refunds.candidate(paying.id))?.refundState).toBeNull();
      expect(await s.refunds.byRedemption(paying.id)).toBeNull();

      // Paid out: the provider keeps it and owes it back.
      await s.payables.recordPayoutSent(lock.payout, { tx: 't', txBytes: 'b', txExpiry: null, nowMs: LATER });
      await s.payables.settlePayout(lock.payout, LATER);
      expect(await begun(s, paying.id)).toMatchObject({ providerKept: 9_900n, payableId: null });
      expect((await s.payables.byRedemption(paying.id))?.state).toBe('paid');

      // A v2 payment with no payable (inference, or its record failed): the platform holds it all.
      const bare = await undelivered(s, v2());
      expect(await begun(s, bare.id)).toMatchObject({ providerKept: 0n, payableId: null });
    });
  });
}
