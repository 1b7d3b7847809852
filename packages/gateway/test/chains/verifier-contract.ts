/**
 * One contract suite for every chain verifier. Each chain supplies a ChainHarness
 * backed by its sandbox chain and real SDK clients; the suite asserts the verdicts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChainId, ChainVerifier, OfferedOption, VerifyInput } from '../../src/chains/chain.ts';
import { ChainUnavailableError } from '../../src/chains/chain.ts';
import type { LookupGuardOptions, LookupOutcome } from '../../src/chains/guard.ts';
import type { RpcProxy } from './rpc-proxy.ts';
import { startRpcProxy } from './rpc-proxy.ts';

/** The production verifier's options a test may vary: another RPC URL (a proxy), the lookup guard. */
export type VerifierOptions = { rpcUrl?: string } & LookupGuardOptions;

export interface HarnessTransfer {
  to: string;
  amount: bigint;
  /** Defaults to the harness's USDC asset. */
  asset?: 'usdc' | 'other';
}

export interface ChainHarness {
  chain: ChainId;
  network: string;
  /** The production verifier, pointed at the sandbox chain. */
  verifier: ChainVerifier;
  /** The sandbox chain's RPC URL. */
  rpcUrl: string;
  /** Another production verifier, built with the same chain options plus these. */
  makeVerifier(opts?: VerifierOptions): ChainVerifier;
  /** USDC asset id as offered (Solana mint, Sui coin type). */
  asset: string;
  /** The funded payer and a second funded wallet. */
  payer: string;
  other: string;
  /** A fresh address that can receive USDC. */
  newRecipient(): Promise<string>;
  /**
   * Signs with the payer (or `from: 'other'`) and submits ONE transaction with these
   * transfers and memos; resolves to its id once the chain has it (final unless a
   * fault says otherwise). `fail: true` submits a transaction that fails on-chain
   * after being included (fees charged, no transfer).
   */
  send(opts: {
    transfers: HarnessTransfer[];
    memos: string[];
    from?: 'payer' | 'other';
    fail?: boolean;
  }): Promise<string>;
  /** As send, but only signs: the chain sees nothing until submit(). */
  prepare(opts: Parameters<ChainHarness['send']>[0]): Promise<{ id: string; submit(): Promise<void> }>;
  /**
   * Fault switches of the sandbox chain: 'none'; 'rpc_down' (the RPC answers errors);
   * 'hold_finality' (new transactions stay non-final until finalizeAll()).
   */
  setFault(fault: 'none' | 'rpc_down' | 'hold_finality'): void;
  finalizeAll(): void;
  /** An id in the chain's format that the chain has never seen. */
  unknownTxId(): string;
  close(): Promise<void>;
}

const MINUTE = 60_000;

export function runVerifierContract(name: string, makeHarness: () => Promise<ChainHarness>): void {
  describe(`chain verifier contract: ${name}`, () => {
    let h: ChainHarness;
    let provider: string;
    let platform: string;
    let n = 0;

    beforeAll(async () => {
      h = await makeHarness();
      provider = await h.newRecipient();
      platform = await h.newRecipient();
    });
    afterAll(async () => {
      await h?.close();
    });

    function option(memo: string, providerAmount = 900_000n, platformAmount = 100_000n): OfferedOption {
      return {
        chain: h.chain,
        network: h.network,
        asset: h.asset,
        memo,
        splits: [
          { recipientType: 'provider', payTo: provider, amount: providerAmount },
          { recipientType: 'platform', payTo: platform, amount: platformAmount },
        ],
      };
    }
    function input(
      opt: OfferedOption,
      txHashOrDigest: string,
      extra: Partial<VerifyInput> = {},
    ): VerifyInput {
      const now = Date.now();
      return {
        option: opt,
        issuedAtMs: now - MINUTE,
        expiresAtMs: now + 4 * MINUTE,
        skewMs: 30_000,
        payer: h.payer,
        txHashOrDigest,
        ...extra,
      };
    }
    /** The two split legs of option(): provider and platform, in USDC unless told otherwise. */
    const legs = (
      providerAmount = 900_000n,
      platformAmount = 100_000n,
      asset: 'usdc' | 'other' = 'usdc',
    ): HarnessTransfer[] => [
      { to: provider, amount: providerAmount, asset },
      { to: platform, amount: platformAmount, asset },
    ];
    const memo = () => `tollgate:v1:test-${name}-${++n}-${Math.random().toString(36).slice(2)}`;

    it('accepts an exact two-leg payment with the memo', async () => {
      const m = memo();
      const tx = await h.send({
        transfers: legs(),
        memos: [m],
      });
      const r = await h.verifier.verify(input(option(m), tx));
      expect(r.status).toBe('verified');
      if (r.status === 'verified') {
        expect(r.legs).toEqual(
          expect.arrayContaining([
            { owner: provider, delta: 900_000n },
            { owner: platform, delta: 100_000n },
          ]),
        );
      }
    });

    it('rejects a provider leg one atomic unit short', async () => {
      const m = memo();
      const tx = await h.send({
        transfers: legs(899_999n, 100_000n),
        memos: [m],
      });
      expect(await h.verifier.verify(input(option(m), tx))).toEqual({
        status: 'rejected',
        reason: 'amount_mismatch',
      });
    });

    it('rejects a platform leg one atomic unit short', async () => {
      const m = memo();
      const tx = await h.send({
        transfers: legs(900_000n, 99_999n),
        memos: [m],
      });
      expect(await h.verifier.verify(input(option(m), tx))).toEqual({
        status: 'rejected',
        reason: 'amount_mismatch',
      });
    });

    it('rejects all the money sent to one recipient', async () => {
      const m = memo();
      const tx = await h.send({ transfers: [{ to: provider, amount: 1_000_000n }], memos: [m] });
      expect(await h.verifier.verify(input(option(m), tx))).toEqual({
        status: 'rejected',
        reason: 'amount_mismatch',
      });
    });

    it('rejects the right amounts in another asset with the same decimals', async () => {
      const m = memo();
      const tx = await h.send({
        transfers: legs(900_000n, 100_000n, 'other'),
        memos: [m],
      });
      expect(await h.verifier.verify(input(option(m), tx))).toEqual({
        status: 'rejected',
        reason: 'wrong_asset',
      });
    });

    it('rejects a payment without the memo', async () => {
      const m = memo();
      const tx = await h.send({
        transfers: legs(),
        memos: [],
      });
      expect(await h.verifier.verify(input(option(m), tx))).toEqual({
        status: 'rejected',
        reason: 'memo_missing',
      });
    });

    it('rejects a payment with a different memo', async () => {
      const m = memo();
      const tx = await h.send({
        transfers: legs(),
        memos: [memo()],
      });
      expect(await h.verifier.verify(input(option(m), tx))).toEqual({
        status: 'rejected',
        reason: 'memo_missing',
      });
    });

    it('rejects a payment with the memo twice', async () => {
      const m = memo();
      const tx = await h.send({
        transfers: legs(),
        memos: [m, m],
      });
      expect(await h.verifier.verify(input(option(m), tx))).toEqual({
        status: 'rejected',
        reason: 'memo_duplicated',
      });
    });

    it('rejects a proof whose payer did not sign the transaction', async () => {
      const m = memo();
      const tx = await h.send({
        transfers: legs(),
        memos: [m],
        from: 'other',
      });
      expect(await h.verifier.verify(input(option(m), tx))).toEqual({
        status: 'rejected',
        reason: 'payer_not_signer',
      });
    });

    it('rejects a transaction that failed on-chain', async () => {
      const m = memo();
      const tx = await h.send({
        transfers: legs(),
        memos: [m],
        fail: true,
      });
      expect(await h.verifier.verify(input(option(m), tx))).toEqual({
        status: 'rejected',
        reason: 'transaction_failed',
      });
    });

    it('reports an unknown transaction as pending', async () => {
      expect(await h.verifier.verify(input(option(memo()), h.unknownTxId()))).toEqual({
        status: 'pending',
        reason: 'not_found',
      });
    });

    it('reports a transaction that is not final as pending, then verifies it', async () => {
      const m = memo();
      h.setFault('hold_finality');
      let tx: string;
      try {
        tx = await h.send({
          transfers: legs(),
          memos: [m],
        });
        const first = await h.verifier.verify(input(option(m), tx));
        expect(first.status).toBe('pending');
      } finally {
        h.setFault('none');
      }
      h.finalizeAll();
      expect((await h.verifier.verify(input(option(m), tx))).status).toBe('verified');
    });

    it('throws ChainUnavailableError when the RPC is down', async () => {
      const m = memo();
      const tx = await h.send({
        transfers: legs(),
        memos: [m],
      });
      h.setFault('rpc_down');
      try {
        await expect(h.verifier.verify(input(option(m), tx))).rejects.toBeInstanceOf(ChainUnavailableError);
      } finally {
        h.setFault('none');
      }
    });

    it('rejects a transaction made before the requirement was issued', async () => {
      const m = memo();
      const tx = await h.send({
        transfers: legs(),
        memos: [m],
      });
      const later = Date.now() + 10 * MINUTE;
      const r = await h.verifier.verify(
        input(option(m), tx, { issuedAtMs: later, expiresAtMs: later + 5 * MINUTE }),
      );
      expect(r).toEqual({ status: 'rejected', reason: 'transaction_too_old' });
    });

    it('rejects a transaction made after the requirement expired', async () => {
      const m = memo();
      const tx = await h.send({
        transfers: legs(),
        memos: [m],
      });
      const earlier = Date.now() - 20 * MINUTE;
      const r = await h.verifier.verify(
        input(option(m), tx, { issuedAtMs: earlier, expiresAtMs: earlier + 5 * MINUTE }),
      );
      expect(r).toEqual({ status: 'rejected', reason: 'transaction_too_late' });
    });

    describe('forged proofs are cheap to reject (negative cache, one lookup per id, a cap)', () => {
      let proxy: RpcProxy;
      beforeEach(async () => {
        proxy = await startRpcProxy(h.rpcUrl);
      });
      afterEach(async () => {
        await proxy.close();
      });
      const notFound = { status: 'pending', reason: 'not_found' };

      it('a forged id asked again within the window costs no RPC', async () => {
        const outcomes: LookupOutcome[] = [];
        const v = h.makeVerifier({
          rpcUrl: proxy.url,
          onLookup: (chain, outcome) => {
            expect(chain).toBe(h.chain);
            outcomes.push(outcome);
          },
        });
        const forged = h.unknownTxId();
        expect(await v.verify(input(option(memo()), forged))).toEqual(notFound);
        const firstLookup = proxy.calls;
        expect(firstLookup).toBeGreaterThan(0);
        for (let i = 0; i < 5; i++) expect(await v.verify(input(option(memo()), forged))).toEqual(notFound);
        expect(proxy.calls).toBe(firstLookup);
        expect(outcomes).toEqual(['rpc', ...Array(5).fill('negative_cache_hit')]);
      });

      it('the same forged id asked many times at once is looked up once', async () => {
        const v = h.makeVerifier({ rpcUrl: proxy.url });
        expect(await v.verify(input(option(memo()), h.unknownTxId()))).toEqual(notFound);
        const perLookup = proxy.calls;
        const forged = h.unknownTxId();
        const all = await Promise.all(
          Array.from({ length: 10 }, () => v.verify(input(option(memo()), forged))),
        );
        for (const r of all) expect(r).toEqual(notFound);
        expect(proxy.calls).toBe(2 * perLookup);
      });

      it('caps lookups in flight: the excess fails fast with ChainUnavailableError, the node never sees it', async () => {
        const outcomes: LookupOutcome[] = [];
        const v = h.makeVerifier({
          rpcUrl: proxy.url,
          maxConcurrentLookups: 3,
          onLookup: (_chain, outcome) => outcomes.push(outcome),
        });
        proxy.hold();
        try {
          const lookups = Array.from({ length: 8 }, () =>
            v.verify(input(option(memo()), h.unknownTxId())).then(
              (r) => r,
              (e: unknown) => e,
            ),
          );
          // The five over the cap settle while the node still holds the first three.
          const excess = await Promise.race([Promise.all(lookups.slice(3)), sleep(3_000, 'stalled')]);
          expect(excess).not.toBe('stalled');
          for (const e of excess as unknown[]) expect(e).toBeInstanceOf(ChainUnavailableError);
          while (proxy.waiting < 3) await sleep(10);
          expect(proxy.maxInFlight).toBe(3);
          proxy.release();
          for (const r of await Promise.all(lookups.slice(0, 3))) expect(r).toEqual(notFound);
          expect(proxy.maxInFlight).toBe(3);
          expect(outcomes.filter((o) => o === 'over_capacity')).toHaveLength(5);
          // The slots came back: the next lookups are answered.
          for (let i = 0; i < 4; i++) {
            expect(await v.verify(input(option(memo()), h.unknownTxId()))).toEqual(notFound);
          }
        } finally {
          proxy.release();
        }
      });

      it('a genuine payment the chain did not know yet verifies once the window has passed', async () => {
        const m = memo();
        const v = h.makeVerifier({ rpcUrl: proxy.url, negativeCacheTtlMs: 300 });
        const tx = await h.prepare({ transfers: legs(), memos: [m] });
        expect(await v.verify(input(option(m), tx.id))).toEqual(notFound);
        await tx.submit();
        const calls = proxy.calls;
        expect(await v.verify(input(option(m), tx.id))).toEqual(notFound);
        expect(proxy.calls).toBe(calls);
        await sleep(350);
        expect((await v.verify(input(option(m), tx.id))).status).toBe('verified');
      });

      it('remembers neither a transaction that is not final nor an RPC failure', async () => {
        const m = memo();
        const v = h.makeVerifier({ rpcUrl: proxy.url });
        h.setFault('hold_finality');
        let tx: string;
        try {
          tx = await h.send({ transfers: legs(), memos: [m] });
          expect((await v.verify(input(option(m), tx))).status).toBe('pending');
        } finally {
          h.setFault('none');
        }
        h.finalizeAll();
        expect((await v.verify(input(option(m), tx))).status).toBe('verified');

        const forged = h.unknownTxId();
        h.setFault('rpc_down');
        try {
          await expect(v.verify(input(option(memo()), forged))).rejects.toBeInstanceOf(ChainUnavailableError);
        } finally {
          h.setFault('none');
        }
        const calls = proxy.calls;
        expect(await v.verify(input(option(memo()), forged))).toEqual(notFound);
        expect(proxy.calls).toBeGreaterThan(calls);
      });
    });
  });
}
