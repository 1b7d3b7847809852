/**
 * Migration 0006 rebuilds `payables` (for the wider state CHECK): a database written
 * before it keeps every payable, exactly, with its indexes and its one-per-redemption key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterAll, describe, expect, it } from 'vitest';
import { initialSchema } from '../../src/store/migrations/0001-initial-schema.ts';
import { turnOncePerPayment } from '../../src/store/migrations/0002-turn-once-per-payment.ts';
import { retryBudget } from '../../src/store/migrations/0003-retry-budget.ts';
import { payables } from '../../src/store/migrations/0004-payables.ts';
import { paymentReadModel } from '../../src/store/migrations/0005-payment-read-model.ts';
import { openStore } from '../../src/store/open-store.ts';
import { sqliteBackend } from '../../src/store/sqlite/backend.ts';
import { NodeSqliteDialect } from '../../src/store/sqlite/dialect.ts';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-mig6-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('migration 0006 on a database with payables', () => {
  it('keeps every payable exactly and accepts the cancelled state', async () => {
    const file = join(dir, 'old.db');
    // biome-ignore lint/suspicious/noExplicitAny: the schema as it was before 0006.
    const db = new Kysely<any>({ dialect: new NodeSqliteDialect({ database: new DatabaseSync(file) }) });
    const types = sqliteBackend(db, (q) => db.executeQuery(q) as never).types;
    const migrator = new Migrator({
      db,
      provider: {
        getMigrations: async () => ({
          '0001-initial-schema': initialSchema(types),
          '0002-turn-once-per-payment': turnOncePerPayment,
          '0003-retry-budget': retryBudget(types),
          '0004-payables': payables(types),
          '0005-payment-read-model': paymentReadModel(types),
        }),
      },
    });
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const big = (2n ** 60n + 3n).toString();
    await db
      .insertInto('payables')
      .values(
        [
          ['pay_1', 'rdm_1', 'pending', big, null],
          ['pay_2', 'rdm_2', 'paid', '7', 'pout_1'],
        ].map(([id, redemption_id, state, amount, payout_id]) => ({
          id,
          redemption_id,
          project_id: 'prj_1',
          chain: 'solana',
          network: 'localnet',
          recipient: 'Prov',
          amount,
          created_at_ms: 1_000,
          state,
          payout_id,
          payout_tx: payout_id ? 'tx_1' : null,
          paid_at_ms: payout_id ? 2_000 : null,
        })),
      )
      .execute();
    await db.destroy();

    const store = await openStore(`sqlite:${file}`);
    try {
      expect(await store.payables.byRedemption('rdm_1')).toMatchObject({
        id: 'pay_1',
        state: 'pending',
        amount: 2n ** 60n + 3n,
        payoutId: null,
      });
      expect(await store.payables.byRedemption('rdm_2')).toMatchObject({
        state: 'paid',
        amount: 7n,
        payoutTx: 'tx_1',
        paidAtMs: 2_000,
      });
      // Still one payable per redemption.
      const again = await store.payables.record({
        redemptionId: 'rdm_1',
        projectId: 'prj_1',
        chain: 'solana',
        network: 'localnet',
        recipient: 'Other',
        amount: 1n,
        nowMs: 5,
      });
      expect(again.id).toBe('pay_1');
      const check = new Kysely<{ payables: { state: string; id: string } }>({
        dialect: new NodeSqliteDialect({ database: new DatabaseSync(file) }),
      });
      try {
        await check.updateTable('payables').set({ state: 'cancelled' }).where('id', '=', 'pay_1').execute();
        await expect(
          check.updateTable('payables').set({ state: 'lost' }).where('id', '=', 'pay_2').execute(),
        ).rejects.toThrow(/CHECK/);
        const indexes = await sql<{
          name: string;
        }>`select name from sqlite_master where type = 'index' and tbl_name = 'payables'`.execute(check);
        expect(indexes.rows.map((r) => r.name)).toEqual(
          expect.arrayContaining(['payables_due_idx', 'payables_project_idx', 'payables_payout_idx']),
        );
      } finally {
        await check.destroy();
      }
      expect(await store.payables.summary('prj_1')).toEqual([
        { chain: 'solana', network: 'localnet', pending: 0n, paid: 7n },
      ]);
    } finally {
      await store.close();
    }
  });
});
