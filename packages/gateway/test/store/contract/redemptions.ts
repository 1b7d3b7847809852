import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ClaimInput, ClaimResult, Store, StoredResponse } from '../../../src/store/store.ts';

const T0 = 1_800_000_000_000;
const LEASE = 30_000;

export function claimInput(overrides: Partial<ClaimInput> = {}): ClaimInput {
  return {
    chain: 'solana',
    network: 'localnet',
    txId: `tx-${randomBytes(8).toString('hex')}`,
    nonce: randomBytes(16).toString('hex'),
    requestHash: randomBytes(32).toString('hex'),
    requirementId: 'req-token',
    payer: 'PayerAddr',
    meta: { price: 10_000n, fee: 100n, endpointId: 'ep_1' },
    projectId: 'prj_1',
    endpointId: 'ep_1',
    amount: 10_100n,
    fee: 100n,
    nowMs: T0,
    leaseMs: LEASE,
    ...overrides,
  };
}

export function kinds(results: ClaimResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) out[r.kind] = (out[r.kind] ?? 0) + 1;
  return out;
}

function claimed(r: ClaimResult) {
  if (r.kind !== 'claimed') throw new Error(`expected claimed, got ${r.kind}`);
  return r.redemption;
}

const response: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/octet-stream', 'x-upstream': 'yes' },
  // Not valid UTF-8 on purpose: the body is bytes, not text.
  body: new Uint8Array([0, 255, 254, 10, 13, 0x80, 0xc3, 0x28, 1]),
};

export function redemptionContract(get: () => Store): void {
  describe('redemptions', () => {
    it('claims a fresh key once and finds it by transaction', async () => {
      const s = get();
      const input = claimInput();
      const r = claimed(await s.redemptions.claim(input));
      expect(r).toMatchObject({
        chain: input.chain,
        network: input.network,
        txId: input.txId,
        nonce: input.nonce,
        requestHash: input.requestHash,
        requirementId: 'req-token',
        payer: 'PayerAddr',
        state: 'in_progress',
        attempt: 1,
        leaseUntilMs: T0 + LEASE,
        response: null,
        createdAtMs: T0,
      });
      expect(await s.redemptions.byTx(input.chain, input.network, input.txId)).toEqual(r);
      expect(await s.redemptions.byTx(input.chain, 'mainnet', input.txId)).toBeNull();
      expect(await s.redemptions.byTx('sui', input.network, input.txId)).toBeNull();

      const again = await s.redemptions.claim({ ...input, nowMs: T0 + 1 });
      expect(again).toEqual({ kind: 'in_progress', redemption: r });
    });

    it('answers a claim without a project (inference) exactly as the row reads back', async () => {
      const s = get();
      const input = claimInput({ projectId: null, endpointId: null, amount: 0n, fee: 0n, meta: {} });
      const r = claimed(await s.redemptions.claim(input));
      expect(r).toMatchObject({ projectId: null, endpointId: null, amount: 0n, fee: 0n, replays: 0 });
      expect(await s.redemptions.byTx(input.chain, input.network, input.txId)).toEqual(r);
    });

    it('of 50 concurrent claims of one fresh key exactly one wins', async () => {
      const s = get();
      const input = claimInput();
      const results = await Promise.all(Array.from({ length: 50 }, () => s.redemptions.claim(input)));
      expect(kinds(results)).toEqual({ claimed: 1, in_progress: 49 });
    });

    it('after a release exactly one of 20 concurrent claimers takes the payment again', async () => {
      const s = get();
      const input = claimInput();
      const first = claimed(await s.redemptions.claim(input));
      expect(await s.redemptions.release(first.id, first.attempt)).toBe(true);
      expect((await s.redemptions.byTx(input.chain, input.network, input.txId))!.state).toBe('retryable');
      // Released means given back: the same attempt can neither deliver, extend nor release again.
      expect(await s.redemptions.complete(first.id, first.attempt, response, T0 + 1)).toBe(false);
      expect(await s.redemptions.renew(first.id, first.attempt, T0 + 10 * LEASE)).toBe(false);
      expect(await s.redemptions.release(first.id, first.attempt)).toBe(false);

      const results = await Promise.all(
        Array.from({ length: 20 }, () => s.redemptions.claim({ ...input, nowMs: T0 + 5 })),
      );
      expect(kinds(results)).toEqual({ claimed: 1, in_progress: 19 });
      const winner = claimed(results.find((r) => r.kind === 'claimed')!);
      expect(winner).toMatchObject({
        id: first.id,
        attempt: 2,
        state: 'in_progress',
        leaseUntilMs: T0 + 5 + LEASE,
      });
      // The released attempt cannot come back.
      expect(await s.redemptions.complete(first.id, first.attempt, response, T0 + 6)).toBe(false);
      expect(await s.redemptions.complete(first.id, 2, response, T0 + 6)).toBe(true);
    });

    it('refuses a transaction already redeemed for a different request', async () => {
      const s = get();
      const input = claimInput();
      const first = claimed(await s.redemptions.claim(input));
      expect(await s.redemptions.claim({ ...input, requestHash: 'f'.repeat(64) })).toEqual({
        kind: 'used_elsewhere',
        by: 'tx',
      });
      // Same transaction under another nonce (another requirement) is also someone else's.
      expect(await s.redemptions.claim({ ...input, nonce: 'other-nonce' })).toEqual({
        kind: 'used_elsewhere',
        by: 'tx',
      });
      // Even once delivered or released.
      await s.redemptions.release(first.id, first.attempt);
      expect(await s.redemptions.claim({ ...input, requestHash: '0'.repeat(64) })).toEqual({
        kind: 'used_elsewhere',
        by: 'tx',
      });
      // The refused attempts left the original untouched and claimable by its own request.
      expect(await s.redemptions.byTx(input.chain, input.network, input.txId)).toMatchObject({
        requestHash: input.requestHash,
        nonce: input.nonce,
        state: 'retryable',
        attempt: 1,
      });
      expect(claimed(await s.redemptions.claim(input)).attempt).toBe(2);
    });

    it('refuses a nonce already redeemed with a different transaction', async () => {
      const s = get();
      const input = claimInput();
      claimed(await s.redemptions.claim(input));
      expect(await s.redemptions.claim({ ...input, txId: 'another-tx' })).toEqual({
        kind: 'used_elsewhere',
        by: 'nonce',
      });
      // The same transaction id on another network is another transaction: still the nonce's.
      expect(await s.redemptions.claim({ ...input, network: 'devnet' })).toEqual({
        kind: 'used_elsewhere',
        by: 'nonce',
      });
      expect(await s.redemptions.byTx(input.chain, input.network, 'another-tx')).toBeNull();
      expect(await s.redemptions.byTx(input.chain, 'devnet', input.txId)).toBeNull();
    });

    it('keys transactions by chain and network', async () => {
      const s = get();
      const input = claimInput();
      claimed(await s.redemptions.claim(input));
      const elsewhere = claimInput({ txId: input.txId, network: 'devnet' });
      expect(claimed(await s.redemptions.claim(elsewhere)).network).toBe('devnet');
      const otherChain = claimInput({ txId: input.txId, chain: 'sui' });
      expect(claimed(await s.redemptions.claim(otherChain)).chain).toBe('sui');
    });

    it('lets an expired lease be taken over and fences off the stale holder', async () => {
      const s = get();
      const input = claimInput();
      const stale = claimed(await s.redemptions.claim(input));
      // Still live one millisecond before expiry.
      expect((await s.redemptions.claim({ ...input, nowMs: T0 + LEASE - 1 })).kind).toBe('in_progress');

      const later = T0 + LEASE + 1;
      const results = await Promise.all(
        Array.from({ length: 10 }, () => s.redemptions.claim({ ...input, nowMs: later })),
      );
      expect(kinds(results)).toEqual({ claimed: 1, in_progress: 9 });
      const fresh = claimed(results.find((r) => r.kind === 'claimed')!);
      expect(fresh).toMatchObject({ id: stale.id, attempt: 2, leaseUntilMs: later + LEASE });

      expect(await s.redemptions.complete(stale.id, stale.attempt, response, later)).toBe(false);
      expect(await s.redemptions.release(stale.id, stale.attempt)).toBe(false);
      expect(await s.redemptions.renew(stale.id, stale.attempt, later + 10 * LEASE)).toBe(false);
      expect(await s.redemptions.byTx(input.chain, input.network, input.txId)).toMatchObject({
        state: 'in_progress',
        attempt: 2,
        leaseUntilMs: later + LEASE,
        response: null,
      });
      expect(await s.redemptions.complete(fresh.id, fresh.attempt, response, later + 2)).toBe(true);
    });

    it('replays the exact stored response once delivered, and delivery is final', async () => {
      const s = get();
      const input = claimInput();
      const r = claimed(await s.redemptions.claim(input));
      expect(await s.redemptions.complete(r.id, r.attempt, response, T0 + 10)).toBe(true);

      const replay = await s.redemptions.claim({ ...input, nowMs: T0 + 20 });
      expect(replay.kind).toBe('delivered');
      if (replay.kind !== 'delivered') return;
      expect(replay.redemption).toMatchObject({ id: r.id, state: 'delivered', attempt: 1 });
      expect(replay.redemption.response!.status).toBe(201);
      expect(replay.redemption.response!.headers).toEqual(response.headers);
      expect(Array.from(replay.redemption.response!.body)).toEqual(Array.from(response.body));
      expect(replay.redemption.response!.body).toBeInstanceOf(Uint8Array);
      // Even long after the lease: delivered stays delivered, never claimable again.
      expect((await s.redemptions.claim({ ...input, nowMs: T0 + 100 * LEASE })).kind).toBe('delivered');

      expect(await s.redemptions.complete(r.id, r.attempt, { ...response, status: 500 }, T0 + 30)).toBe(
        false,
      );
      expect(await s.redemptions.release(r.id, r.attempt)).toBe(false);
      expect(await s.redemptions.renew(r.id, r.attempt, T0 + 10 * LEASE)).toBe(false);
      expect((await s.redemptions.byTx(input.chain, input.network, input.txId))!.response!.status).toBe(201);
    });

    it('stores an empty response body', async () => {
      const s = get();
      const input = claimInput();
      const r = claimed(await s.redemptions.claim(input));
      await s.redemptions.complete(
        r.id,
        r.attempt,
        { status: 204, headers: {}, body: new Uint8Array(0) },
        T0,
      );
      const got = await s.redemptions.byTx(input.chain, input.network, input.txId);
      expect(got!.response).toEqual({ status: 204, headers: {}, body: new Uint8Array(0) });
    });

    it('keeps a failed payment from being claimed before its retry time, and counts the failure', async () => {
      const s = get();
      const input = claimInput();
      const first = claimed(await s.redemptions.claim(input));
      expect(first).toMatchObject({ failures: 0, retryAtMs: 0 });
      expect(
        await s.redemptions.release(first.id, first.attempt, { failed: true, retryAtMs: T0 + 2000 }),
      ).toBe(true);
      const early = await s.redemptions.claim({ ...input, nowMs: T0 + 1999 });
      expect(early.kind).toBe('cooling');
      expect(early.kind === 'cooling' && early.redemption).toMatchObject({
        failures: 1,
        retryAtMs: T0 + 2000,
      });
      const again = claimed(await s.redemptions.claim({ ...input, nowMs: T0 + 2000 }));
      expect(again).toMatchObject({ attempt: 2, failures: 1 });
      // A gateway-side release (not failed) frees it at once and counts nothing.
      expect(await s.redemptions.release(again.id, again.attempt)).toBe(true);
      expect(claimed(await s.redemptions.claim({ ...input, nowMs: T0 + 2001 }))).toMatchObject({
        attempt: 3,
        failures: 1,
        retryAtMs: 0,
      });
    });

    it('renews a live lease for its holder only', async () => {
      const s = get();
      const input = claimInput();
      const r = claimed(await s.redemptions.claim(input));
      expect(await s.redemptions.renew(r.id, r.attempt, T0 + 3 * LEASE)).toBe(true);
      expect(await s.redemptions.renew(r.id, r.attempt + 1, T0 + 9 * LEASE)).toBe(false);
      expect(await s.redemptions.renew('rdm_missing', 1, T0 + 9 * LEASE)).toBe(false);
      // Past the original lease but inside the renewed one: still in progress.
      expect((await s.redemptions.claim({ ...input, nowMs: T0 + 2 * LEASE })).kind).toBe('in_progress');
      expect((await s.redemptions.claim({ ...input, nowMs: T0 + 3 * LEASE + 1 })).kind).toBe('claimed');
    });

    it('prunes old response bodies but keeps the redemption, so the transaction stays used', async () => {
      const s = get();
      const oldIn = claimInput();
      const newIn = claimInput();
      const old = claimed(await s.redemptions.claim(oldIn));
      const fresh = claimed(await s.redemptions.claim(newIn));
      const open = claimed(await s.redemptions.claim(claimInput()));
      await s.redemptions.complete(old.id, old.attempt, response, T0 + 1_000);
      await s.redemptions.complete(fresh.id, fresh.attempt, response, T0 + 5_000);

      expect(await s.redemptions.pruneResponses(T0 + 2_000)).toBe(1);
      expect(await s.redemptions.pruneResponses(T0 + 2_000)).toBe(0);

      const pruned = await s.redemptions.byTx(oldIn.chain, oldIn.network, oldIn.txId);
      expect(pruned).toMatchObject({ id: old.id, state: 'delivered', response: null });
      expect((await s.redemptions.byTx(newIn.chain, newIn.network, newIn.txId))!.response!.body).toEqual(
        response.body,
      );
      expect((await s.redemptions.byTx(open.chain, open.network, open.txId))!.state).toBe('in_progress');
      expect((await s.redemptions.claim({ ...oldIn, nowMs: T0 + 10 * LEASE })).kind).toBe('delivered');
      expect(await s.redemptions.claim({ ...oldIn, requestHash: 'e'.repeat(64) })).toEqual({
        kind: 'used_elsewhere',
        by: 'tx',
      });
      expect(await s.redemptions.claim({ ...claimInput(), nonce: oldIn.nonce })).toEqual({
        kind: 'used_elsewhere',
        by: 'nonce',
      });
    });
  });
}
