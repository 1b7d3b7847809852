import type { CompiledQuery, Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Backend } from '../kysely/backend.ts';
import type { Database } from '../kysely/schema.ts';

const PG_UNIQUE_VIOLATION = '23505';

export function postgresBackend(db: Kysely<Database>): Backend {
  return {
    kind: 'postgres',
    db,
    execute: <R>(query: CompiledQuery) => db.executeQuery<R>(query),
    types: {
      // Byte-wise order whatever the database's default collation is.
      key: sql`text collate "C"`,
      bool: 'boolean',
      ms: 'bigint',
      amount: 'bigint',
      blob: 'bytea',
    },
    isUniqueViolation(err) {
      return (err as { code?: unknown } | null)?.code === PG_UNIQUE_VIOLATION;
    },
    async lockConversation(trx, id) {
      const row = await trx
        .selectFrom('conversations')
        .select('id')
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}
