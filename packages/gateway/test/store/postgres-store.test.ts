/**
 * Runs when DATABASE_URL_TEST points at a PostgreSQL database (CI sets it). Each store
 * gets a fresh schema, dropped when the store closes.
 */
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { claimInput, kinds } from './contract/redemptions.ts';
import { runStoreContract } from './store-contract.ts';

const url = process.env.DATABASE_URL_TEST;

if (!url) {
  describe.skip('store contract: postgres (skipped: set DATABASE_URL_TEST=postgres://… to run)', () => {
    it('needs DATABASE_URL_TEST', () => {});
  });
} else {
  const admin = new Pool({ connectionString: url, max: 2 });
  afterAll(() => admin.end());

  const freshSchema = () => `tg_test_${randomBytes(6).toString('hex')}`;
  const dropSchema = async (schema: string) => {
    await admin.query(`drop schema if exists "${schema}" cascade`);
  };
  /** A store whose close also drops its schema. */
  const inSchema = async (schema: string): Promise<Store> => {
    const store = await openStore(url, { schema, poolSize: 5 });
    const close = store.close.bind(store);
    return Object.assign(store, {
      close: async () => {
        await close();
        await dropSchema(schema);
      },
    });
  };

  runStoreContract('postgres', () => inSchema(freshSchema()));

  /** Two stores (two pools, as two processes would have) on one fresh schema, dropped afterwards. */
  const withTwoStores = async (run: (a: Store, b: Store) => Promise<void>) => {
    const schema = freshSchema();
    const a = await openStore(url, { schema });
    const b = await openStore(url, { schema });
    try {
      await run(a, b);
    } finally {
      await a.close();
      await b.close();
      await dropSchema(schema);
    }
  };

  describe('postgres: two processes sharing one database', () => {
    it('migrates once when two stores open a fresh schema at the same time', async () => {
      const schema = freshSchema();
      const stores = await Promise.all([openStore(url, { schema }), openStore(url, { schema })]);
      try {
        const { rows } = await admin.query(
          'select name from "' + schema + '".kysely_migration order by name',
        );
        const names = rows.map((r: { name: string }) => r.name);
        // Each migration applied exactly once, in order.
        expect(names).toEqual([...new Set(names)].sort());
        expect(names[0]).toBe('0001-initial-schema');
        expect(names).toContain('0002-turn-once-per-payment');
        expect(stores.map((s) => s.kind)).toEqual(['postgres', 'postgres']);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
        await dropSchema(schema);
      }
    });

    it('gives a payment to exactly one claimer across two connection pools', () =>
      withTwoStores(async (a, b) => {
        const input = claimInput();
        const race = (nowMs: number) =>
          Promise.all(
            Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).redemptions.claim({ ...input, nowMs })),
          );
        const first = await race(input.nowMs);
        expect(kinds(first)).toEqual({ claimed: 1, in_progress: 49 });

        const winner = first.find((r) => r.kind === 'claimed');
        if (winner?.kind !== 'claimed') throw new Error('no winner');
        expect(await b.redemptions.release(winner.redemption.id, winner.redemption.attempt)).toBe(true);
        const second = await race(input.nowMs + 1);
        expect(kinds(second)).toEqual({ claimed: 1, in_progress: 49 });

        // An expired lease is taken over by exactly one, too.
        const third = await race(input.nowMs + 10 * input.leaseMs);
        expect(kinds(third)).toEqual({ claimed: 1, in_progress: 49 });
        expect((await a.redemptions.byTx(input.chain, input.network, input.txId))!.attempt).toBe(3);

        // The same nonce with different transactions from both pools: one wins, the rest are refused.
        const nonce = randomBytes(16).toString('hex');
        const clash = await Promise.all(
          Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).redemptions.claim(claimInput({ nonce }))),
        );
        expect(kinds(clash)).toEqual({ claimed: 1, used_elsewhere: 19 });
        expect(clash.filter((r) => r.kind === 'used_elsewhere')).toEqual(
          Array.from({ length: 19 }, () => ({ kind: 'used_elsewhere', by: 'nonce' })),
        );
      }));

    it('consumes a challenge once and appends consecutively across two pools', () =>
      withTwoStores(async (a, b) => {
        const c = {
          nonce: 'n1',
          chain: 'sui' as const,
          address: '0x1',
          message: 'm',
          issuedAtMs: 1,
          expiresAtMs: 1e13,
        };
        await a.auth.putChallenge(c);
        const got = await Promise.all(
          Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).auth.consumeChallenge('n1', 2)),
        );
        expect(got.filter((x) => x !== null)).toHaveLength(1);

        const conv = await a.conversations.create({
          owner: { chain: 'sui', address: '0x1' },
          title: 't',
          model: null,
          metadata: {},
        });
        const item = { role: 'user' as const, content: 'x', redemptionId: null, usage: null };
        await Promise.all(
          Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).conversations.append(conv.id, [item, item])),
        );
        const seqs = (await b.conversations.items(conv.id, { limit: 100 })).map((x) => x.seq);
        expect(seqs).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      }));
  });
}
