/**
 * Schema migrations, kept in code and applied when the store opens. Append new
 * migrations to the list; never edit one that has shipped.
 */
import type { Kysely } from 'kysely';
import type { Migration, MigrationProvider } from 'kysely/migration';
import { Migrator } from 'kysely/migration';
import type { Backend, StoreLogger } from '../kysely/backend.ts';
import { initialSchema } from './0001-initial-schema.ts';
import { turnOncePerPayment } from './0002-turn-once-per-payment.ts';
import { retryBudget } from './0003-retry-budget.ts';
import { payables } from './0004-payables.ts';
import { paymentReadModel } from './0005-payment-read-model.ts';
import { refunds } from './0006-refunds.ts';

function migrations(types: Backend['types']): Record<string, Migration> {
  return {
    '0001-initial-schema': initialSchema(types),
    '0002-turn-once-per-payment': turnOncePerPayment,
    '0003-retry-budget': retryBudget(types),
    '0004-payables': payables(types),
    '0005-payment-read-model': paymentReadModel(types),
    '0006-refunds': refunds(types),
  };
}

export interface MigrateOptions {
  types: Backend['types'];
  /** Schema holding Kysely's bookkeeping tables (PostgreSQL); omit for SQLite. */
  migrationTableSchema?: string;
  logger?: StoreLogger;
}

// biome-ignore lint/suspicious/noExplicitAny: the migrator works on the untyped schema.
export async function migrateToLatest(db: Kysely<any>, opts: MigrateOptions): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(opts.types) };
  const migrator = new Migrator({
    db,
    provider,
    ...(opts.migrationTableSchema !== undefined ? { migrationTableSchema: opts.migrationTableSchema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  for (const r of results ?? []) {
    if (r.status === 'Success')
      opts.logger?.info({ migration: r.migrationName }, 'database migration applied');
    if (r.status === 'Error') opts.logger?.error({ migration: r.migrationName }, 'database migration failed');
  }
  if (error !== undefined) {
    throw new Error(`database migration failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}
