import type { Kysely } from 'kysely';
import { Kysely as KyselyDb, PostgresDialect, sql } from 'kysely';
import { Pool } from 'pg';
import type { StoreLogger } from '../kysely/backend.ts';
import { kyselyStore } from '../kysely/kysely-store.ts';
import type { Database } from '../kysely/schema.ts';
import { migrateToLatest } from '../migrations/migrate.ts';
import type { Store } from '../store.ts';
import { postgresBackend } from './backend.ts';

export interface PostgresStoreOptions {
  logger?: StoreLogger;
  /** Schema to create (if missing) and use as the search_path; the default is the connection's own. */
  schema?: string;
  /** Pool size per process (default 10). */
  poolSize?: number;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export async function openPostgresStore(url: string, opts: PostgresStoreOptions = {}): Promise<Store> {
  const { schema, logger } = opts;
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new Error(`invalid PostgreSQL schema name "${schema}": use lower-case letters, digits and _`);
  }
  const pool = new Pool({
    connectionString: url,
    max: opts.poolSize ?? 10,
    application_name: 'tollgate',
    ...(schema !== undefined ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', (err) => logger?.error({ err }, 'PostgreSQL idle client error'));
  const db = new KyselyDb<Database>({ dialect: new PostgresDialect({ pool }) });
  const backend = postgresBackend(db);
  try {
    await migrateLocked(db, backend.types, schema, logger);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return kyselyStore(backend);
}

/**
 * Migrates under a session advisory lock held on one connection, so processes that
 * open the same database together create the schema and its tables exactly once.
 * (Kysely's migrator also locks, but only after creating its own bookkeeping tables.)
 */
async function migrateLocked(
  db: Kysely<Database>,
  types: ReturnType<typeof postgresBackend>['types'],
  schema: string | undefined,
  logger: StoreLogger | undefined,
): Promise<void> {
  await db.connection().execute(async (conn) => {
    const target =
      schema ??
      (await sql<{ s: string | null }>`select current_schema() as s`.execute(conn)).rows[0]?.s ??
      null;
    if (target === null)
      throw new Error('PostgreSQL connection has no current schema: check its search_path');
    const key = sql`hashtext('tollgate.migrate'), hashtext(${target})`;
    await sql`select pg_advisory_lock(${key})`.execute(conn);
    try {
      if (schema !== undefined) await sql`create schema if not exists ${sql.id(schema)}`.execute(conn);
      await migrateToLatest(conn, { types, migrationTableSchema: target, ...(logger ? { logger } : {}) });
    } finally {
      await sql`select pg_advisory_unlock(${key})`.execute(conn);
    }
  });
}
