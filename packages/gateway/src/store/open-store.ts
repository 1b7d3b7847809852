/**
 * Opens the database named by DATABASE_URL and brings its schema up to date:
 * `sqlite:<path>` (parent directory created), `sqlite::memory:`, or
 * `postgres://…` / `postgresql://…`.
 */
import type { StoreLogger } from './kysely/backend.ts';
import { openPostgresStore } from './postgres/open.ts';
import { openSqliteStore } from './sqlite/open.ts';
import type { Store } from './store.ts';

export type { StoreLogger } from './kysely/backend.ts';

export interface OpenStoreOptions {
  logger?: StoreLogger;
  /** PostgreSQL only: schema to create if missing and use as search_path (tests isolate with it). */
  schema?: string;
  /** PostgreSQL only: connections per process (default 10). */
  poolSize?: number;
}

export async function openStore(databaseUrl: string, opts: OpenStoreOptions = {}): Promise<Store> {
  const url = databaseUrl.trim();
  if (url.startsWith('sqlite:')) {
    if (opts.schema !== undefined) throw new Error('openStore: the schema option is for PostgreSQL only');
    return openSqliteStore(sqliteLocation(url), opts.logger ? { logger: opts.logger } : {});
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    return openPostgresStore(url, opts);
  }
  // Name only the scheme: the URL may carry a password.
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
  throw new Error(
    `unsupported DATABASE_URL${scheme ? ` scheme "${scheme}:"` : ''}: expected sqlite:<path>, sqlite::memory: or postgres://…`,
  );
}

/** `sqlite:./data/x.db`, `sqlite:/abs/x.db`, `sqlite:///abs/x.db`, `sqlite::memory:`. */
export function sqliteLocation(url: string): string {
  let rest = url.slice('sqlite:'.length);
  if (rest.startsWith('//')) rest = rest.slice(2);
  if (rest === '')
    throw new Error('DATABASE_URL "sqlite:" needs a file path, e.g. sqlite:./data/tollgate.db');
  return rest;
}
