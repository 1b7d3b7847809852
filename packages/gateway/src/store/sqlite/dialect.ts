/**
 * A Kysely dialect over Node's built-in `node:sqlite` (DatabaseSync), so the embedded
 * backend needs no native addon. SQLite has one connection per handle: transactions
 * are serialized by a mutex, and autocommit writes share commits (group-commit.ts).
 */
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import type {
  DatabaseConnection,
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  Kysely,
  QueryCompiler,
  QueryResult,
} from 'kysely';
import { CompiledQuery, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import {
  type Checkpoints,
  type MainHandle,
  NO_CHECKPOINTS,
  SQLITE_AUTOCHECKPOINT_PAGES,
} from './checkpoints.ts';
import { isBatchableWrite, SqliteExecutor } from './group-commit.ts';
import { type Durability, NO_DURABILITY } from './wal-sync.ts';

export interface NodeSqliteDialectConfig {
  /** An open database; the driver closes it on destroy. */
  database: DatabaseSync;
  /**
   * How commits become durable before they are acknowledged (wal-sync.ts); none by default
   * (`:memory:`, or a database whose `synchronous` setting syncs inside COMMIT itself).
   */
  durability?: Durability;
  /**
   * Who checkpoints the WAL (checkpoints.ts), given the handle's lock; none by default
   * (SQLite's automatic checkpoint, on the event loop).
   */
  checkpoints?: (main: MainHandle) => Checkpoints;
  /** Where a bug in a caller is reported (a transaction its connection left open). */
  log?: DialectLog;
}

interface DialectLog {
  error(obj: object, msg?: string): void;
}

export class NodeSqliteDialect implements Dialect {
  readonly #config: NodeSqliteDialectConfig;
  #driver: NodeSqliteDriver | null = null;

  constructor(config: NodeSqliteDialectConfig) {
    this.#config = config;
  }

  createDriver(): Driver {
    this.#driver = new NodeSqliteDriver(
      this.#config.database,
      this.#config.durability ?? NO_DURABILITY,
      this.#config.checkpoints,
      this.#config.log,
    );
    return this.#driver;
  }

  /**
   * Runs a compiled statement outside any transaction straight through the driver, as
   * Kysely's executor would with no plugins and no logging, minus its own work per query
   * (acquiring, releasing, transforming: about 6 µs a statement on the bench VM). For the
   * paid path's prepared statements (backend.ts `execute`).
   */
  execute<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.#driver) return Promise.reject(new Error('the SQLite dialect has no driver yet'));
    return this.#driver.outsideTransaction<R>(query);
  }
  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }
  createAdapter(): DialectAdapter {
    return new SharedHandleSqliteAdapter();
  }
  // biome-ignore lint/suspicious/noExplicitAny: Kysely's own Dialect signature.
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}

/**
 * Kysely would serialize every acquisition of a single-connection dialect behind its own
 * mutex, so writes could never meet in one commit; the driver below serializes what must
 * be (transactions) itself.
 */
class SharedHandleSqliteAdapter extends SqliteAdapter {
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

class Mutex {
  #tail: Promise<void> = Promise.resolve();

  /** Resolves with the release function once every earlier holder has released. */
  async lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((resolve) => {
      release = resolve;
    });
    const previous = this.#tail;
    this.#tail = previous.then(() => next);
    await previous;
    return release;
  }
}

/**
 * One node:sqlite handle serves every caller. An explicit transaction (Kysely's, or a raw
 * BEGIN on a connection() scope) holds the handle from BEGIN until the connection is
 * released; everything else runs between transactions: a read runs at once and answers
 * once every commit it could have seen is on disk; autocommit writes go through the group
 * commit (group-commit.ts), which also waits for open transactions.
 */
class NodeSqliteDriver implements Driver {
  readonly #db: DatabaseSync;
  readonly #mutex = new Mutex();
  readonly #executor: SqliteExecutor;
  readonly #durability: Durability;
  readonly #checkpoints: Checkpoints;

  readonly #log: DialectLog | undefined;
  /** Set when destroy() begins: the direct path refuses statements from then on. */
  #destroyed = false;

  constructor(
    db: DatabaseSync,
    durability: Durability,
    checkpoints?: (main: MainHandle) => Checkpoints,
    log?: DialectLog,
  ) {
    this.#db = db;
    this.#log = log;
    this.#durability = durability;
    this.#checkpoints =
      checkpoints?.({
        exclusive: async (fn) => {
          const release = await this.#mutex.lock();
          try {
            return await fn();
          } finally {
            release();
          }
        },
        autoCheckpoint: () => db.exec(`PRAGMA wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`),
        writable: () => !durability.failure?.(),
      }) ?? NO_CHECKPOINTS;
    this.#executor = new SqliteExecutor(
      db,
      (flush) => {
        void this.#mutex.lock().then((release) => {
          try {
            flush();
          } finally {
            release();
          }
        });
      },
      durability,
      this.#checkpoints,
      (err) =>
        this.#log?.error(
          { err },
          'SQLite: a group commit ROLLBACK failed and left its transaction open; the store refuses every statement until the gateway restarts',
        ),
    );
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new NodeSqliteConnection(this.#executor, this.#mutex, this.#log);
  }

  /**
   * One statement on a connection of its own that holds no transaction (see the dialect's
   * execute). Refused once destroy() has begun, as Kysely refuses every other query then.
   */
  outsideTransaction<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#destroyed) return Promise.reject(new Error('driver has already been destroyed'));
    return new NodeSqliteConnection(this.#executor, this.#mutex, this.#log).executeQuery<R>(query);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as NodeSqliteConnection).unlock();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    // IMMEDIATE takes the write lock up front: a deferred transaction that later
    // upgrades to a writer can fail with SQLITE_BUSY without waiting busy_timeout.
    await run(connection, 'begin immediate');
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await run(connection, 'commit');
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    // A COMMIT that went through but could not be made durable has nothing left to roll back:
    // the caller gets the sync's error, not SQLite's "no transaction is active".
    if (!this.#db.isTransaction) return;
    await run(connection, 'rollback');
  }
  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await run(connection, `savepoint ${quoteIdent(name)}`);
  }
  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await run(connection, `rollback to ${quoteIdent(name)}`);
  }
  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await run(connection, `release ${quoteIdent(name)}`);
  }

  async destroy(): Promise<void> {
    this.#destroyed = true;
    // Writes still queued commit first (they were promised durability, not dropped).
    (await this.#mutex.lock())();
    await new Promise<void>((r) => setImmediate(r));
    (await this.#mutex.lock())();
    // The checkpoint thread's connection closes first: the handle, closed last, removes the WAL.
    await this.#checkpoints.close();
    await this.#durability.close();
    if (!this.#db.isOpen) return;
    const path = this.#durability.failure?.() ? this.#db.location() : null;
    if (path === null) {
      this.#db.close();
      return;
    }
    // After a failed WAL sync nothing may be copied out of the WAL, but the last connection
    // to close checkpoints it. A read-only connection that has read holds the file open past
    // the handle's close (so the handle is not the last), and cannot checkpoint itself: the
    // WAL stays for SQLite to recover from when the gateway restarts.
    const keeper = new DatabaseSync(path, { readOnly: true });
    try {
      keeper.prepare('select count(*) from sqlite_master').get();
      this.#db.close();
    } finally {
      keeper.close();
    }
  }
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

async function run(connection: DatabaseConnection, sqlText: string): Promise<void> {
  await connection.executeQuery(CompiledQuery.raw(sqlText));
}

const BEGIN = /^\s*begin\b/i;
/** Ends an explicit transaction with its changes kept. */
const COMMIT = /^\s*(commit|end)\b/i;
/** Statements that never write; any other statement run outside a transaction is synced. */
const READ_ONLY = /^\s*(select|explain)\b/i;

/** One acquisition of the handle (see NodeSqliteDriver). */
class NodeSqliteConnection implements DatabaseConnection {
  readonly #executor: SqliteExecutor;
  readonly #mutex: Mutex;
  readonly #log: DialectLog | undefined;
  /** Set while this acquisition holds the handle for a transaction. */
  #release: (() => void) | null = null;

  constructor(executor: SqliteExecutor, mutex: Mutex, log: DialectLog | undefined) {
    this.#executor = executor;
    this.#mutex = mutex;
    this.#log = log;
  }

  unlock(): void {
    const release = this.#release;
    this.#release = null;
    // Left open, the transaction would take in every later statement on the shared handle,
    // acknowledged but never committed: undo it before anyone else runs (or, if it cannot be
    // undone, refuse every statement from now on: group-commit.ts rollbackOrStick).
    if (release && this.#executor.rollbackOrStick())
      this.#log?.error({}, 'a SQLite connection was given back inside its transaction; rolled back');
    release?.();
  }

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const sqlText = compiledQuery.sql;
    const params = compiledQuery.parameters.map(toSqlite);
    if (this.#release) {
      const isCommit = COMMIT.test(sqlText);
      // A WAL sync failed while this transaction ran: it is rolled back, never committed.
      const failure = isCommit ? this.#executor.failure() : null;
      if (failure) throw failure;
      const result = this.#executor.run<R>(sqlText, params);
      if (isCommit) {
        this.#executor.noteCommit();
        await this.#executor.durable();
      }
      return result;
    }
    if (isBatchableWrite(sqlText)) return this.#executor.write<R>(sqlText, params);
    // A handle stuck inside a transaction it could not roll back answers nothing: a read
    // would see rows that were never committed (group-commit.ts #stuck).
    const unusable = this.#executor.unusable();
    if (unusable) throw unusable;
    // After a failed WAL sync nothing more is written: a transaction or a lone write could
    // commit, with its caller told it failed.
    const readOnly = READ_ONLY.test(sqlText);
    const failure = readOnly ? null : this.#executor.failure();
    if (failure) throw failure;
    if (BEGIN.test(sqlText)) {
      this.#release = await this.#mutex.lock();
      try {
        // Nothing is begun on top of a commit not on disk yet; under the lock none can follow.
        const pending = this.#executor.untilDurable();
        if (pending) await pending;
        return this.#executor.run<R>(sqlText, params);
      } catch (err) {
        this.unlock();
        throw err;
      }
    }
    const release = await this.#mutex.lock();
    let result: QueryResult<R>;
    try {
      result = this.#executor.run<R>(sqlText, params);
    } finally {
      release();
    }
    if (!readOnly) this.#executor.noteCommit();
    // Answered only once every commit it could have seen (or made) is on disk: nobody acts on
    // a row a crash could still take back. Each commit is counted in the turn that made it.
    const pending = this.#executor.untilDurable();
    if (pending) await pending;
    return result;
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const unusable = this.#executor.unusable();
    if (unusable) throw unusable;
    const release = this.#release ? null : await this.#mutex.lock();
    try {
      // Under the lock no commit can follow: wait for those made so far (a transaction's BEGIN did).
      const pending = release ? this.#executor.untilDurable() : null;
      if (pending) await pending;
      const { stmt } = this.#executor.prepare(compiledQuery.sql);
      for (const row of stmt.iterate(...compiledQuery.parameters.map(toSqlite))) {
        yield { rows: [row as R] };
      }
    } finally {
      release?.();
    }
  }
}

function toSqlite(value: unknown): SQLInputValue {
  // Booleans are bound as 0/1 (older node:sqlite versions reject them).
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value === undefined) return null;
  return value as SQLInputValue;
}
