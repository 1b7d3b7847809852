/**
 * WAL checkpoints on a worker thread (checkpoints.ts): the gateway's handle never
 * checkpoints inside a COMMIT, yet under writes that never pause the WAL is copied into the
 * database and started over, the data stays whole, and closing leaves no WAL behind. A
 * thread that cannot run hands checkpoints back to SQLite, and says so.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { Kysely } from 'kysely';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { backgroundCheckpoints, type MainHandle } from '../../src/store/sqlite/checkpoints.ts';
import { NodeSqliteDialect } from '../../src/store/sqlite/dialect.ts';
import { openSqliteStore } from '../../src/store/sqlite/open.ts';
import { walFileSync } from '../../src/store/sqlite/wal-sync.ts';

interface Db {
  blobs: { id: number; data: Uint8Array };
}

const dir = mkdtempSync(join(tmpdir(), 'tollgate-checkpoints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const size = (path: string) => (existsSync(path) ? statSync(path).size : 0);

/** A database file in WAL mode whose own handle never checkpoints, with one table. */
function walDatabase(name: string, table: string): { file: string; database: DatabaseSync } {
  const file = join(dir, name);
  const database = new DatabaseSync(file);
  database.exec('PRAGMA journal_mode = WAL');
  database.exec('PRAGMA synchronous = NORMAL');
  database.exec('PRAGMA wal_autocheckpoint = 0');
  database.exec(table);
  return { file, database };
}

/** Runs `lines` in a child process after `const store = await openSqliteStore(<name>.db)`. */
async function runStoreScript(name: string, lines: string[]): Promise<{ out: string; code: number | null }> {
  const script = join(dir, `${name}.mjs`);
  const open = fileURLToPath(new URL('../../src/store/sqlite/open.ts', import.meta.url));
  writeFileSync(
    script,
    [
      `import { openSqliteStore } from ${JSON.stringify(open)};`,
      `const store = await openSqliteStore(${JSON.stringify(join(dir, `${name}.db`))});`,
      ...lines,
    ].join('\n'),
  );
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  return { out, code };
}

describe('sqlite checkpoints on a worker thread', () => {
  it('copies and restarts the WAL while writes never pause, without the handle checkpointing', async () => {
    const { file, database } = walDatabase(
      'busy.db',
      'create table blobs (id integer primary key, data blob not null)',
    );
    const db = new Kysely<Db>({
      dialect: new NodeSqliteDialect({
        database,
        durability: walFileSync(`${file}-wal`),
        checkpoints: (main) => backgroundCheckpoints(file, main, { everyMs: 5 }),
      }),
    });
    // The first commit's pages reach the database file once the thread is up and running.
    await db
      .insertInto('blobs')
      .values({ id: 0, data: new Uint8Array(1) })
      .execute();
    await vi.waitFor(() => expect(size(file)).toBeGreaterThan(4096), { timeout: 10_000 });
    const row = new Uint8Array(8192).fill(7);
    const writers = 16;
    const perWriter = 150; // 2400 rows of 8 KB: about 20 MB through the WAL
    let maxWal = 0;
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < perWriter; i++) {
          await db
            .insertInto('blobs')
            .values({ id: w * perWriter + i + 1, data: row })
            .execute();
          maxWal = Math.max(maxWal, size(`${file}-wal`));
        }
      }),
    );
    const written = writers * perWriter * row.length;
    // The handle itself never checkpoints: its automatic checkpoint stayed off.
    expect(database.prepare('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: 0 });
    // Yet the pages reached the database file, and the WAL was started over again and again.
    expect(size(file)).toBeGreaterThan(written / 2);
    // Without the second pass the WAL holds everything written, 1.5 times over (frame headers, pages).
    expect(maxWal).toBeLessThan(written * 0.6);
    await db.destroy();
    // The handle closed last, so SQLite removed the WAL; every row is there.
    expect(existsSync(`${file}-wal`)).toBe(false);
    const check = new DatabaseSync(file);
    expect(check.prepare('select count(*) as n, sum(length(data)) as bytes from blobs').get()).toEqual({
      n: writers * perWriter + 1,
      bytes: written + 1,
    });
    check.close();
  });

  it('a store keeps its data through checkpoints and leaves no WAL once closed', async () => {
    const file = join(dir, 'store.db');
    const store = await openSqliteStore(file);
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) {
      const r = await store.redemptions.claim({
        chain: 'solana',
        network: 'localnet',
        txId: `tx-${i}`,
        nonce: `nonce-${i}`,
        requestHash: `hash-${i}`,
        requirementId: `req-${i}`,
        payer: 'payer',
        projectId: null,
        endpointId: null,
        amount: 10n,
        fee: 0n,
        meta: {},
        nowMs: Date.now(),
        leaseMs: 30_000,
      });
      if (r.kind !== 'claimed') throw new Error(r.kind);
      ids.push(r.redemption.id);
      await new Promise((resolve) => setTimeout(resolve, i % 20 === 0 ? 250 : 0));
    }
    await store.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
    const again = await openSqliteStore(file);
    for (const [i, id] of ids.entries()) {
      expect((await again.redemptions.byTx('solana', 'localnet', `tx-${i}`))?.id).toBe(id);
    }
    await again.close();
  });

  it('holds the handle for a second pass only once the WAL has grown past 1000 pages', async () => {
    const { file, database } = walDatabase(
      'passes.db',
      'create table blobs (id integer primary key, data blob not null)',
    );
    let held = 0;
    const main: MainHandle = {
      exclusive: (fn) => {
        held += 1;
        return fn();
      },
      autoCheckpoint: () => {},
      writable: () => true,
    };
    const checkpoints = backgroundCheckpoints(file, main, { everyMs: 1 });
    const insert = database.prepare('insert into blobs (data) values (?)');
    // A few pages: the first pass copies them all, and the handle is never held.
    insert.run(new Uint8Array(100));
    checkpoints.committed();
    await vi.waitFor(() => expect(size(file)).toBeGreaterThan(4096), { timeout: 10_000 });
    expect(held).toBe(0);
    // 1200 pages in one commit: a busy gateway's WAL, which gets the second pass.
    database.exec('begin');
    for (let i = 0; i < 1200; i++) insert.run(new Uint8Array(4000));
    database.exec('commit');
    checkpoints.committed();
    await vi.waitFor(() => expect(held).toBe(1), { timeout: 10_000 });
    await checkpoints.close();
    database.close();
  });

  it('a thread that cannot open the database hands checkpoints back to SQLite, logged once', async () => {
    const error = vi.fn();
    const autoCheckpoint = vi.fn();
    const main: MainHandle = { exclusive: (fn) => fn(), autoCheckpoint, writable: () => true };
    const checkpoints = backgroundCheckpoints(join(dir, 'missing', 'dir', 'x.db'), main, {
      everyMs: 1,
      log: { error },
    });
    checkpoints.committed();
    await vi.waitFor(() => expect(autoCheckpoint).toHaveBeenCalledTimes(1));
    expect(error).toHaveBeenCalledTimes(1);
    expect(error.mock.calls[0]?.[1]).toMatch(/SQLite checkpoints on the event loop again/);
    checkpoints.committed();
    await checkpoints.close();
    expect(autoCheckpoint).toHaveBeenCalledTimes(1);
    expect(error).toHaveBeenCalledTimes(1);
  });

  it("runs no checkpoint once a WAL sync failed, neither its own nor SQLite's", async () => {
    const { file, database } = walDatabase('broken.db', 'create table t (id integer)');
    const error = vi.fn();
    const autoCheckpoint = vi.fn();
    let held = 0;
    const main: MainHandle = {
      exclusive: (fn) => {
        held += 1;
        return fn();
      },
      autoCheckpoint,
      writable: () => false,
    };
    const checkpoints = backgroundCheckpoints(file, main, { everyMs: 1, log: { error } });
    checkpoints.committed();
    await vi.waitFor(() => expect(error).toHaveBeenCalledTimes(1));
    expect(error.mock.calls[0]?.[1]).toMatch(/no checkpoint runs after a failed WAL sync/);
    await checkpoints.close();
    expect(autoCheckpoint).not.toHaveBeenCalled();
    expect(held).toBe(0);
    // Nothing was copied: the table is still only in the WAL.
    expect(size(file)).toBe(4096);
    database.close();
  });

  it('keeps a process alive while its writes wait for the pass that holds the handle', async () => {
    // The thread is unreferenced while idle; a pass that holds the handle has writes waiting
    // on it, and a script with nothing else to do must not exit with those writes unanswered.
    const run = await runStoreScript('busy-script', [
      'const body = new Uint8Array(16384);',
      'let done = 0;',
      'for (let i = 0; i < 1500; i++) {',
      `  const c = await store.redemptions.claim({ chain: 'solana', network: 'localnet', txId: 'tx-' + i, nonce: 'n-' + i, requestHash: 'h', requirementId: 'r', payer: 'p', projectId: null, endpointId: null, amount: 1n, fee: 0n, meta: {}, nowMs: Date.now(), leaseMs: 60000 });`,
      `  if (c.kind !== 'claimed') throw new Error(c.kind);`,
      '  if (await store.redemptions.complete(c.redemption.id, c.redemption.attempt, { status: 200, headers: {}, body }, Date.now())) done++;',
      '}',
      'await store.close();',
      "process.stdout.write('done ' + done);",
    ]);
    expect(run).toEqual({ out: 'done 1500', code: 0 });
  }, 60_000);

  it('lets a process that opened a store and never closed it exit', async () => {
    const run = await runStoreScript('left-open', [`process.stdout.write('opened');`]);
    expect(run).toEqual({ out: 'opened', code: 0 });
  });
});
