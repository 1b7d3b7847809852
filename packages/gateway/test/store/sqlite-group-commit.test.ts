/**
 * Group commit in the node:sqlite dialect: autocommit writes issued together share one
 * transaction, yet each caller sees exactly its own outcome, and nothing is acknowledged
 * before it is committed (another handle on the file sees it the moment the promise resolves).
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Kysely, sql } from 'kysely';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NodeSqliteDialect } from '../../src/store/sqlite/dialect.ts';
import { CoalescingSync, walFileSync } from '../../src/store/sqlite/wal-sync.ts';

interface Db {
  items: { id: number; label: string; qty: number };
}

const dir = mkdtempSync(join(tmpdir(), 'tollgate-group-commit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
let file: string;
let db: Kysely<Db>;
let other: DatabaseSync;
let leftOpen: ReturnType<typeof vi.fn<(obj: object, msg?: string) => void>>;

beforeEach(() => {
  file = join(dir, `g-${++n}.db`);
  const database = new DatabaseSync(file);
  database.exec('PRAGMA journal_mode = WAL');
  database.exec(
    'create table items (id integer primary key, label text not null unique, qty integer not null check (qty >= 0))',
  );
  leftOpen = vi.fn();
  db = new Kysely<Db>({ dialect: new NodeSqliteDialect({ database, log: { error: leftOpen } }) });
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

  it('fails only the breaking write when it is the first or the last of its batch', async () => {
    await db.insertInto('items').values({ id: 1, label: 'taken', qty: 1 }).execute();
    const results = await Promise.allSettled([
      db.insertInto('items').values({ id: 2, label: 'taken', qty: 1 }).execute(),
      db.insertInto('items').values({ id: 3, label: 'a', qty: 1 }).execute(),
      db.insertInto('items').values({ id: 4, label: 'b', qty: 1 }).execute(),
      db.insertInto('items').values({ id: 5, label: 'a', qty: 1 }).execute(),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled', 'rejected']);
    expect(other.prepare('select id from items order by id').all()).toEqual([
      { id: 1 },
      { id: 3 },
      { id: 4 },
    ]);
  });

  it('runs a clean batch without savepoints, and a batch with a failing write once more with them, in one commit', async () => {
    // Counts the statements the executor runs on its handle (it prepares each text once).
    const real = new DatabaseSync(file);
    const ran = new Map<string, number>();
    const counted = new Proxy(real, {
      get(target, prop) {
        if (prop === 'prepare')
          return (text: string) => {
            const stmt = target.prepare(text);
            return new Proxy(stmt, {
              get(t, p) {
                const v = Reflect.get(t, p, t);
                if (p !== 'run' && p !== 'all') return typeof v === 'function' ? v.bind(t) : v;
                return (...args: unknown[]) => {
                  ran.set(text, (ran.get(text) ?? 0) + 1);
                  return (v as (...a: unknown[]) => unknown).apply(t, args);
                };
              },
            });
          };
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const cdb = new Kysely<Db>({ dialect: new NodeSqliteDialect({ database: counted }) });
    const count = (text: string) => ran.get(text) ?? 0;
    await Promise.all([
      cdb.insertInto('items').values({ id: 1, label: 'a', qty: 1 }).execute(),
      cdb.insertInto('items').values({ id: 2, label: 'b', qty: 1 }).execute(),
    ]);
    expect(count('savepoint group_write')).toBe(0);
    expect(count('commit')).toBe(1);

    ran.clear();
    const results = await Promise.allSettled([
      cdb.insertInto('items').values({ id: 3, label: 'a', qty: 1 }).execute(),
      cdb.insertInto('items').values({ id: 4, label: 'c', qty: 1 }).execute(),
      cdb.insertInto('items').values({ id: 5, label: 'd', qty: 1 }).execute(),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    // The first pass rolled back, the second put each write in a savepoint and committed once.
    expect(count('rollback')).toBe(1);
    expect(count('savepoint group_write')).toBe(3);
    expect(count('commit')).toBe(1);
    await cdb.destroy();
  });

  /** A store on a handle whose ROLLBACK fails, leaving its transaction open. */
  function storeWhoseRollbackFails(): Kysely<Db> {
    const real = new DatabaseSync(file);
    const stuck = new Proxy(real, {
      get(target, prop) {
        if (prop === 'prepare')
          return (text: string) =>
            text === 'rollback'
              ? {
                  columns: () => [],
                  run: () => {
                    throw new Error('rollback failed');
                  },
                }
              : target.prepare(text);
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    return new Kysely<Db>({ dialect: new NodeSqliteDialect({ database: stuck, log: { error: leftOpen } }) });
  }

  /** The handle stays inside the open transaction: nothing reads its rows, nothing joins it, the operator is told once. */
  async function expectRefusingEverything(sdb: Kysely<Db>): Promise<void> {
    await expect(sdb.selectFrom('items').select('qty').execute()).rejects.toThrow(/could not be rolled back/);
    await expect(sql`select 1`.execute(sdb)).rejects.toThrow(/could not be rolled back/);
    const streamed = async () => {
      for await (const _row of sdb.selectFrom('items').select('qty').stream()) return 'a row';
      return 'no row';
    };
    await expect(streamed()).rejects.toThrow(/could not be rolled back/);
    await expect(sdb.insertInto('items').values({ id: 9, label: 'later', qty: 1 }).execute()).rejects.toThrow(
      /could not be rolled back/,
    );
    const stuckLines = leftOpen.mock.calls.filter((c) => /ROLLBACK failed/.test(String(c[1])));
    expect(stuckLines).toHaveLength(1);
    expect(leftOpen.mock.calls.some((c) => /; rolled back$/.test(String(c[1])))).toBe(false);
  }

  it('acknowledges no write of a batch whose rollback failed: none runs inside the transaction left open', async () => {
    const sdb = storeWhoseRollbackFails();
    await sdb.insertInto('items').values({ id: 1, label: 'taken', qty: 1 }).execute();
    const results = await Promise.allSettled([
      sdb.updateTable('items').set({ qty: 5 }).where('id', '=', 1).execute(),
      sdb.insertInto('items').values({ id: 3, label: 'taken', qty: 1 }).execute(),
    ]);
    const qty = (other.prepare('select qty from items where id = 1').get() as { qty: number }).qty;
    // Whatever was acknowledged is on the file for another connection; nothing else is.
    expect(results[0]!.status === 'fulfilled').toBe(qty === 5);
    expect(results[1]!.status).toBe('rejected');
    // The store's ping fails too: readiness reports the database down.
    await expectRefusingEverything(sdb);
    await sdb.destroy().catch(() => undefined);
  });

  it('acknowledges no later write when an explicit transaction could not be rolled back', async () => {
    const sdb = storeWhoseRollbackFails();
    await expect(
      sdb.transaction().execute(async (trx) => {
        await trx.insertInto('items').values({ id: 1, label: 'in the failed transaction', qty: 1 }).execute();
        throw new Error('the caller gives up');
      }),
    ).rejects.toThrow();
    // Neither a lone write nor a batch may run inside the transaction left open.
    const results = await Promise.allSettled([
      sdb.insertInto('items').values({ id: 2, label: 'alone', qty: 1 }).execute(),
    ]);
    const batch = await Promise.allSettled([
      sdb.insertInto('items').values({ id: 3, label: 'batched', qty: 1 }).execute(),
      sdb.insertInto('items').values({ id: 4, label: 'batched', qty: 1 }).execute(),
    ]);
    expect([...results, ...batch].map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(other.prepare('select id from items').all()).toEqual([]);
    await expectRefusingEverything(sdb);
    await sdb.destroy().catch(() => undefined);
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

  it('rolls back a transaction its connection left open, so later writes are committed, not taken into it', async () => {
    await expect(
      db.connection().execute(async (conn) => {
        await sql`begin immediate`.execute(conn);
        await sql`insert into items (id, label, qty) values (1, 'left open', 1)`.execute(conn);
        throw new Error('forgot to roll back');
      }),
    ).rejects.toThrow('forgot');
    await db.insertInto('items').values({ id: 2, label: 'after', qty: 1 }).execute();
    expect(other.prepare('select label from items').all()).toEqual([{ label: 'after' }]);
    expect(leftOpen).toHaveBeenCalledTimes(1);
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

/** A durability whose syncs the test completes or fails by hand, counting them. */
function manualDurability() {
  const pending: { resolve(): void; reject(e: unknown): void }[] = [];
  const sync = new CoalescingSync(
    () =>
      new Promise<void>((resolve, reject) => {
        pending.push({ resolve, reject });
      }),
  );
  return { durability: { sync: () => sync.sync(), close: () => sync.close() }, pending };
}

const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
};

describe('sqlite commits acknowledged only once durable', () => {
  let durable: ReturnType<typeof manualDurability>;
  let ddb: Kysely<Db>;
  beforeEach(() => {
    const database = new DatabaseSync(join(dir, `d-${++n}.db`));
    database.exec('PRAGMA journal_mode = WAL');
    database.exec('PRAGMA synchronous = NORMAL');
    database.exec(
      'create table items (id integer primary key, label text not null unique, qty integer not null)',
    );
    durable = manualDurability();
    ddb = new Kysely<Db>({ dialect: new NodeSqliteDialect({ database, durability: durable.durability }) });
  });
  afterEach(async () => {
    // Completes every sync, including those the close itself waits for.
    const closed = ddb.destroy();
    do for (const p of durable.pending) p.resolve();
    while (!(await settled(closed)));
    await closed;
  });

  it('resolves a group of writes only after the WAL sync that began after their commit', async () => {
    const writes = [1, 2, 3].map((id) =>
      ddb
        .insertInto('items')
        .values({ id, label: `l${id}`, qty: 1 })
        .execute(),
    );
    const all = Promise.all(writes);
    expect(await settled(all)).toBe(false);
    expect(durable.pending).toHaveLength(1);
    durable.pending[0]!.resolve();
    await all;
  });

  it('a write committed while a sync runs waits for the next sync, which covers every waiter', async () => {
    const first = ddb.insertInto('items').values({ id: 1, label: 'a', qty: 1 }).execute();
    expect(await settled(first)).toBe(false);
    const second = ddb.insertInto('items').values({ id: 2, label: 'b', qty: 1 }).execute();
    const third = ddb.insertInto('items').values({ id: 3, label: 'c', qty: 1 }).execute();
    expect(await settled(second)).toBe(false);
    // Only the first sync has started; the second and third commits came after it began.
    expect(durable.pending).toHaveLength(1);
    durable.pending[0]!.resolve();
    await first;
    expect(await settled(second)).toBe(false);
    expect(durable.pending).toHaveLength(2);
    durable.pending[1]!.resolve();
    await Promise.all([second, third]);
  });

  it('a read waits while a commit is not on disk yet, so nobody acts on a row a crash could take back', async () => {
    const write = ddb.insertInto('items').values({ id: 1, label: 'a', qty: 1 }).execute();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    const read = ddb.selectFrom('items').selectAll().execute();
    expect(await settled(read)).toBe(false);
    for (const p of durable.pending) p.resolve();
    await write;
    for (const p of durable.pending) p.resolve();
    expect(await read).toEqual([{ id: 1, label: 'a', qty: 1 }]);
    // With every commit on disk, a read runs without asking for a sync.
    const before = durable.pending.length;
    await ddb.selectFrom('items').selectAll().execute();
    expect(durable.pending).toHaveLength(before);
  });

  it('a read after a commit whose sync is already asked for joins that sync instead of asking for another', async () => {
    const write = ddb.insertInto('items').values({ id: 1, label: 'a', qty: 1 }).execute();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    // The write's sync began after its commit; the read needs nothing newer.
    expect(durable.pending).toHaveLength(1);
    const reads = [1, 2, 3].map(() => ddb.selectFrom('items').selectAll().execute());
    expect(await settled(Promise.all(reads))).toBe(false);
    expect(durable.pending).toHaveLength(1);
    durable.pending[0]!.resolve();
    await write;
    // The one sync answered them all: no second one to wait for.
    expect(await settled(Promise.all(reads))).toBe(true);
    for (const r of await Promise.all(reads)) expect(r).toEqual([{ id: 1, label: 'a', qty: 1 }]);
    expect(durable.pending).toHaveLength(1);
  });

  it('a read after a commit newer than the running sync waits for the next sync', async () => {
    const first = ddb.insertInto('items').values({ id: 1, label: 'a', qty: 1 }).execute();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    const second = ddb.insertInto('items').values({ id: 2, label: 'b', qty: 1 }).execute();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    const read = ddb.selectFrom('items').selectAll().execute();
    durable.pending[0]!.resolve();
    await first;
    // The first sync began before the second commit: it does not cover what the read may see.
    expect(await settled(read)).toBe(false);
    expect(durable.pending).toHaveLength(2);
    durable.pending[1]!.resolve();
    await second;
    expect(await read).toHaveLength(2);
  });

  it('a read queued behind a commit made while it waited answers only once that commit is on disk', async () => {
    let endTrx!: () => void;
    const held = new Promise<void>((r) => {
      endTrx = r;
    });
    const trx = ddb.transaction().execute(async (t) => {
      await t.insertInto('items').values({ id: 10, label: 'trx', qty: 1 }).execute();
      await held;
    });
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    // Both wait for the transaction: the write's flush first, then the read.
    const write = ddb.insertInto('items').values({ id: 1, label: 'unsynced', qty: 1 }).execute();
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    const read = ddb.selectFrom('items').selectAll().execute();
    endTrx();
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    durable.pending[0]!.resolve(); // the transaction's commit only
    await trx;
    // The read ran after the write's commit: it must wait for that commit's sync.
    expect(await settled(write)).toBe(false);
    expect(await settled(read)).toBe(false);
    for (const p of durable.pending) p.resolve();
    await write;
    expect((await read).map((r) => r.id).sort()).toEqual([1, 10]);
  });

  it('after a failed sync, a read asks for a new one instead of failing with the old error', async () => {
    const write = ddb.insertInto('items').values({ id: 1, label: 'a', qty: 1 }).execute();
    expect(await settled(write)).toBe(false);
    durable.pending[0]!.reject(new Error('EIO'));
    await expect(write).rejects.toThrow('EIO');
    const read = ddb.selectFrom('items').selectAll().execute();
    expect(await settled(read)).toBe(false);
    expect(durable.pending).toHaveLength(2);
    durable.pending[1]!.resolve();
    expect(await read).toHaveLength(1);
  });

  it('a write refused because of an earlier commit answers only once that commit is on disk', async () => {
    const first = ddb.insertInto('items').values({ id: 1, label: 'a', qty: 1 }).execute();
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    const clash = ddb.insertInto('items').values({ id: 1, label: 'b', qty: 1 }).execute();
    clash.catch(() => undefined);
    // Refused on a row a crash could still take back: no answer yet.
    expect(await settled(clash)).toBe(false);
    for (const p of durable.pending) p.resolve();
    await first;
    await expect(clash).rejects.toThrow(/UNIQUE|constraint/i);
  });

  it('a write that fails on a row of the same batch answers only once that batch is on disk', async () => {
    const first = ddb.insertInto('items').values({ id: 1, label: 'same', qty: 1 }).execute();
    const second = ddb.insertInto('items').values({ id: 2, label: 'same', qty: 1 }).execute();
    expect(await settled(second)).toBe(false);
    durable.pending[0]!.resolve();
    await first;
    await expect(second).rejects.toThrow(/UNIQUE/);
  });

  it('a failed sync fails the writes waiting on it', async () => {
    const write = ddb.insertInto('items').values({ id: 1, label: 'a', qty: 1 }).execute();
    expect(await settled(write)).toBe(false);
    durable.pending[0]!.reject(new Error('EIO'));
    await expect(write).rejects.toThrow('EIO');
  });

  it('a transaction whose commit cannot be made durable fails with the sync error, not a rollback error', async () => {
    const trx = ddb.transaction().execute(async (t) => {
      await t.insertInto('items').values({ id: 1, label: 'a', qty: 1 }).execute();
    });
    expect(await settled(trx)).toBe(false);
    durable.pending[0]!.reject(new Error('EIO'));
    await expect(trx).rejects.toThrow('EIO');
  });

  it('an explicit transaction is acknowledged only once its commit is durable', async () => {
    const trx = ddb.transaction().execute(async (t) => {
      await t.insertInto('items').values({ id: 1, label: 'a', qty: 1 }).execute();
    });
    expect(await settled(trx)).toBe(false);
    durable.pending[0]!.resolve();
    await trx;
  });

  it('a statement that is not a read, run outside a transaction, is synced; a read is not', async () => {
    await ddb.selectFrom('items').selectAll().execute();
    expect(durable.pending).toHaveLength(0);
    const ddl = sql`create table other (id integer)`.execute(ddb);
    expect(await settled(ddl)).toBe(false);
    durable.pending[0]!.resolve();
    await ddl;
  });
});

/** A WAL sync that fails with EIO the first time and syncs for real after (counting calls). */
function failingOnce() {
  let calls = 0;
  return {
    calls: () => calls,
    datasync: async (h: FileHandle) => {
      calls += 1;
      if (calls === 1) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
      await h.datasync();
    },
  };
}

describe('walFileSync', () => {
  it('syncs the WAL file through one kept descriptor, and fails when there is no WAL file', async () => {
    const file = join(dir, `w-${++n}.db`);
    const database = new DatabaseSync(file);
    database.exec('PRAGMA journal_mode = WAL');
    database.exec('create table t (id integer)');
    const sync = walFileSync(`${file}-wal`);
    await Promise.all([sync.sync(), sync.sync()]);
    await sync.close();
    // A sync asked for after close would open a descriptor nobody closes: refused.
    await expect(sync.sync()).rejects.toThrow('closed');
    database.close();
    const missing = walFileSync(join(dir, 'absent.db-wal'));
    await expect(missing.sync()).rejects.toMatchObject({ code: 'ENOENT' });
    await missing.close();
  });

  it('after a failed sync, every later sync fails too: nothing later proves the earlier writes reached the disk', async () => {
    const file = join(dir, `w-${++n}.db`);
    const database = new DatabaseSync(file);
    database.exec('PRAGMA journal_mode = WAL');
    database.exec('create table t (id integer)');
    const once = failingOnce();
    const sync = walFileSync(`${file}-wal`, { datasync: once.datasync });
    await expect(sync.sync()).rejects.toMatchObject({ code: 'EIO' });
    const later = sync.sync();
    await expect(later).rejects.toThrow(/earlier sync of the SQLite WAL failed/);
    await expect(later).rejects.toMatchObject({ cause: { code: 'EIO' } });
    expect(once.calls()).toBe(1);
    await sync.close();
    database.close();
  });

  it('once a sync failed, no write reaches SQLite: lone writes, batches and transactions are refused', async () => {
    const file = join(dir, `w-${++n}.db`);
    const database = new DatabaseSync(file);
    database.exec('PRAGMA journal_mode = WAL');
    database.exec('PRAGMA synchronous = NORMAL');
    database.exec(
      'create table items (id integer primary key, label text not null unique, qty integer not null)',
    );
    const once = failingOnce();
    const durability = walFileSync(`${file}-wal`, { datasync: once.datasync });
    const broken = new Kysely<Db>({ dialect: new NodeSqliteDialect({ database, durability }) });
    // The write whose sync failed committed in SQLite; its caller was told it failed.
    await expect(
      broken.insertInto('items').values({ id: 1, label: 'a', qty: 1 }).execute(),
    ).rejects.toMatchObject({
      code: 'EIO',
    });
    const refused = /earlier sync of the SQLite WAL failed/;
    await expect(broken.insertInto('items').values({ id: 2, label: 'b', qty: 1 }).execute()).rejects.toThrow(
      refused,
    );
    await expect(
      broken
        .transaction()
        .execute((t) => t.insertInto('items').values({ id: 3, label: 'c', qty: 1 }).execute()),
    ).rejects.toThrow(refused);
    await expect(sql`create table other (id integer)`.execute(broken)).rejects.toThrow(refused);
    await expect(broken.selectFrom('items').selectAll().execute()).rejects.toThrow(refused);
    const look = new DatabaseSync(file);
    expect(look.prepare('select id from items').all()).toEqual([{ id: 1 }]);
    expect(look.prepare("select count(*) as n from sqlite_master where name = 'other'").get()).toEqual({
      n: 0,
    });
    look.close();
    expect(once.calls()).toBe(1);
    // Closing does not checkpoint either: the WAL stays for SQLite to recover from, the
    // database file holds nothing of the commit whose sync failed.
    const dbBytes = statSync(file).size;
    await broken.destroy();
    expect(existsSync(`${file}-wal`)).toBe(true);
    expect(statSync(file).size).toBe(dbBytes);
    const reopened = new DatabaseSync(file);
    expect(reopened.prepare('select id from items').all()).toEqual([{ id: 1 }]);
    reopened.close();
  });
});
