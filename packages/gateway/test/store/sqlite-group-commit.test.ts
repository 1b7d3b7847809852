/**
 * Group commit in the node:sqlite dialect: autocommit writes issued together share one
 * transaction, yet each caller sees exactly its own outcome, and nothing is acknowledged
 * before it is committed (another handle on the file sees it the moment the promise resolves).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Kysely } from 'kysely';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeSqliteDialect } from '../../src/store/sqlite/dialect.ts';

interface Db {
  items: { id: number; label: string; qty: number };
}

const dir = mkdtempSync(join(tmpdir(), 'tollgate-group-commit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
let file: string;
let db: Kysely<Db>;
let other: DatabaseSync;

beforeEach(() => {
  file = join(dir, `g-${++n}.db`);
  const database = new DatabaseSync(file);
  database.exec('PRAGMA journal_mode = WAL');
  database.exec(
    'create table items (id integer primary key, label text not null unique, qty integer not null check (qty >= 0))',
  );
  db = new Kysely<Db>({ dialect: new NodeSqliteDialect({ database }) });
  other = new DatabaseSync(file);
});
afterEach(async () => {
  other.close();
  await db.destroy();
});

const count = () => (other.prepare('select count(*) as c from items').get() as { c: number }).c;

describe('sqlite group commit', () => {
  it('commits concurrent inserts, each visible to another connection once its promise resolves', async () => {
    const seen: number[] = [];
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        await db
          .insertInto('items')
          .values({ id: i + 1, label: `l${i}`, qty: 1 })
          .execute();
        seen.push(count());
      }),
    );
    // Every caller, when resumed, found at least its own row on disk through the other handle.
    expect(seen.every((c) => c >= 1)).toBe(true);
    expect(count()).toBe(40);
  });

  it('fails only the writes that break a constraint; the others of the same batch stay', async () => {
    await db.insertInto('items').values({ id: 1, label: 'taken', qty: 1 }).execute();
    const results = await Promise.allSettled([
      db.insertInto('items').values({ id: 2, label: 'a', qty: 1 }).execute(),
      db.insertInto('items').values({ id: 3, label: 'taken', qty: 1 }).execute(),
      db.updateTable('items').set({ qty: -1 }).where('id', '=', 1).execute(),
      db.insertInto('items').values({ id: 4, label: 'b', qty: 2 }).returningAll().executeTakeFirst(),
      db.updateTable('items').set({ qty: 5 }).where('id', '=', 1).executeTakeFirst(),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect((results[3] as PromiseFulfilledResult<unknown>).value).toEqual({ id: 4, label: 'b', qty: 2 });
    expect(
      Number((results[4] as PromiseFulfilledResult<{ numUpdatedRows: bigint }>).value.numUpdatedRows),
    ).toBe(1);
    expect(other.prepare('select id, label, qty from items order by id').all()).toEqual([
      { id: 1, label: 'taken', qty: 5 },
      { id: 2, label: 'a', qty: 1 },
      { id: 4, label: 'b', qty: 2 },
    ]);
  });

  it('gives each of two racing conditional inserts its own answer (the second sees the first)', async () => {
    const insert = () =>
      db
        .insertInto('items')
        .values({ id: 7, label: 'once', qty: 1 })
        .onConflict((oc) => oc.doNothing())
        .returningAll()
        .executeTakeFirst();
    const [a, b] = await Promise.all([insert(), insert()]);
    expect([a, b].filter((r) => r !== undefined)).toHaveLength(1);
    expect(count()).toBe(1);
  });

  it('keeps writes issued during an open transaction out of it, committing them after it', async () => {
    let outside: Promise<unknown> | undefined;
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('items').values({ id: 1, label: 'in', qty: 1 }).execute();
        outside = db.insertInto('items').values({ id: 2, label: 'out', qty: 1 }).execute();
        await new Promise((r) => setTimeout(r, 20));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await outside;
    expect(other.prepare('select label from items').all()).toEqual([{ label: 'out' }]);
  });
});
