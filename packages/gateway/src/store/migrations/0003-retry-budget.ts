import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Backend } from '../kysely/backend.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
type Db = Kysely<any>;

/**
 * The per-proof retry budget (DESIGN §4.5): a released payment may be claimed again
 * only from `retry_at_ms` on (one upstream attempt per Retry-After window), and
 * `failures` counts its failed upstream attempts, so one proof counts once toward
 * endpoint health however often it is retried.
 */
export function retryBudget(types: Backend['types']): Migration {
  return {
    async up(db: Db) {
      await db.schema
        .alterTable('redemptions')
        .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('redemptions')
        .addColumn('retry_at_ms', types.ms, (c) => c.notNull().defaultTo(0))
        .execute();
    },
    async down(db: Db) {
      await db.schema.alterTable('redemptions').dropColumn('retry_at_ms').execute();
      await db.schema.alterTable('redemptions').dropColumn('failures').execute();
    },
  };
}
