/**
 * A Kysely dialect over Node's built-in `node:sqlite` (DatabaseSync), so the embedded
 * backend needs no native addon. SQLite has one connection per handle: every
 * acquisition (and so every transaction) is serialized by a mutex.
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
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

export interface NodeSqliteDialectConfig {
  /** An open database; the driver closes it on destroy. */
  database: DatabaseSync;
}

export class NodeSqliteDialect implements Dialect {
  readonly #config: NodeSqliteDialectConfig;

  constructor(config: NodeSqliteDialectConfig) {
    this.#config = config;
  }

  createDriver(): Driver {
    return new NodeSqliteDriver(this.#config.database);
  }
  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }
  createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }
  // biome-ignore lint/suspicious/noExplicitAny: Kysely's own Dialect signature.
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
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

class NodeSqliteDriver implements Driver {
  readonly #db: DatabaseSync;
  readonly #connection: NodeSqliteConnection;
  readonly #mutex = new Mutex();
  #release: (() => void) | null = null;

  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#connection = new NodeSqliteConnection(db);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    this.#release = await this.#mutex.lock();
    return this.#connection;
  }

  async releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = null;
    release?.();
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
    if (this.#db.isOpen) this.#db.close();
  }
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

async function run(connection: DatabaseConnection, sqlText: string): Promise<void> {
  await connection.executeQuery(CompiledQuery.raw(sqlText));
}

/** Statements are prepared once and reused: the hot paths run the same few queries. */
const STATEMENT_CACHE_SIZE = 256;

class NodeSqliteConnection implements DatabaseConnection {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, { stmt: StatementSync; reader: boolean }>();

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  #prepare(sqlText: string): { stmt: StatementSync; reader: boolean } {
    let entry = this.#statements.get(sqlText);
    if (entry) {
      this.#statements.delete(sqlText);
    } else {
      const stmt = this.#db.prepare(sqlText);
      entry = { stmt, reader: stmt.columns().length > 0 };
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = this.#statements.keys().next().value;
        if (oldest !== undefined) this.#statements.delete(oldest);
      }
    }
    this.#statements.set(sqlText, entry);
    return entry;
  }

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const { stmt, reader } = this.#prepare(compiledQuery.sql);
    const params = compiledQuery.parameters.map(toSqlite);
    if (reader) {
      return { rows: stmt.all(...params) as R[] };
    }
    const { changes, lastInsertRowid } = stmt.run(...params);
    return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const { stmt } = this.#prepare(compiledQuery.sql);
    for (const row of stmt.iterate(...compiledQuery.parameters.map(toSqlite))) {
      yield { rows: [row as R] };
    }
  }
}

function toSqlite(value: unknown): SQLInputValue {
  // Booleans are bound as 0/1 (older node:sqlite versions reject them).
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value === undefined) return null;
  return value as SQLInputValue;
}
