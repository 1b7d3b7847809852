import { chmodSync, closeSync, existsSync, mkdirSync, openSync, realpathSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Kysely, sql } from 'kysely';
import type { StoreLogger } from '../kysely/backend.ts';
import { kyselyStore } from '../kysely/kysely-store.ts';
import type { Database } from '../kysely/schema.ts';
import { migrateToLatest } from '../migrations/migrate.ts';
import type { Store } from '../store.ts';
import { sqliteBackend } from './backend.ts';
import { backgroundCheckpoints, type MainHandle } from './checkpoints.ts';
import { NodeSqliteDialect } from './dialect.ts';
import { walFileSync } from './wal-sync.ts';

const BUSY_TIMEOUT_MS = 5_000;

/**
 * The database holds sealed origin secrets, payers' stored answers and session hashes:
 * it is the gateway's alone. Directories it creates are 0700; the file is created 0600
 * before SQLite opens it (SQLite gives its -wal and -shm files the database file's mode),
 * and a file an older version left readable to others is tightened, best effort (a file
 * owned by someone else keeps its mode: the operator chose it).
 */
function keepPrivate(location: string): void {
  const path = resolve(location);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) {
    try {
      if (existsSync(file) && (statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    } catch {
      // not ours to change
    }
  }
}

/**
 * Opens (creating if needed) a SQLite database file, or `:memory:`, and migrates it.
 * Several processes may share the file (WAL, busy_timeout). Within one process use one
 * store per file: node:sqlite is synchronous, so a second handle waiting for the write
 * lock would block the event loop that the first needs to finish its transaction.
 */
export async function openSqliteStore(location: string, opts: { logger?: StoreLogger } = {}): Promise<Store> {
  const memory = location === ':memory:';
  if (!memory) keepPrivate(location);
  const database = new DatabaseSync(location);
  try {
    // WAL lets readers run beside the writer (and another process); busy_timeout makes a
    // second process wait for the write lock instead of failing at once.
    if (!memory) database.exec('PRAGMA journal_mode = WAL');
    // NORMAL: COMMIT no longer fsyncs on the event loop. Every commit is still on disk
    // before it is acknowledged: the dialect syncs the WAL itself, off the loop (wal-sync.ts).
    if (!memory) database.exec('PRAGMA synchronous = NORMAL');
    // Checkpoints run on a worker thread (checkpoints.ts), not inside a COMMIT on the event loop.
    if (!memory) database.exec('PRAGMA wal_autocheckpoint = 0');
    database.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    database.exec('PRAGMA foreign_keys = ON');
  } catch (err) {
    database.close();
    throw err;
  }
  const dialect = new NodeSqliteDialect({
    database,
    ...(opts.logger ? { log: opts.logger } : {}),
    // SQLite keeps the WAL beside the real file when the path is a symlink.
    ...(memory
      ? {}
      : {
          durability: walFileSync(`${realpathSync(location)}-wal`),
          checkpoints: (main: MainHandle) =>
            backgroundCheckpoints(realpathSync(location), main, opts.logger ? { log: opts.logger } : {}),
        }),
  });
  const db = new Kysely<Database>({ dialect });
  const backend = sqliteBackend(db, (query) => dialect.execute(query));
  try {
    // Kysely's SQLite migration lock is a no-op; one IMMEDIATE transaction around the
    // whole migration makes a second process wait, then find the tables already there.
    await db.connection().execute(async (conn) => {
      await sql`begin immediate`.execute(conn);
      try {
        await migrateToLatest(conn, {
          types: backend.types,
          ...(opts.logger ? { logger: opts.logger } : {}),
        });
        await sql`commit`.execute(conn);
      } catch (err) {
        // After a COMMIT whose WAL sync failed there is nothing to roll back: keep its error.
        if (database.isTransaction) await sql`rollback`.execute(conn);
        throw err;
      }
    });
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return kyselyStore(backend);
}
