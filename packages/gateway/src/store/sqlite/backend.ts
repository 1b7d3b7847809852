import type { CompiledQuery, Kysely, QueryResult } from 'kysely';
import { sql } from 'kysely';
import type { Backend } from '../kysely/backend.ts';
import type { Database } from '../kysely/schema.ts';

/** node:sqlite extended result codes for UNIQUE and PRIMARY KEY violations. */
const SQLITE_CONSTRAINT_UNIQUE = 2067;
const SQLITE_CONSTRAINT_PRIMARYKEY = 1555;

/** `execute`: the dialect's way straight to its driver (dialect.ts). */
export function sqliteBackend(
  db: Kysely<Database>,
  execute: <R>(query: CompiledQuery) => Promise<QueryResult<R>>,
): Backend {
  return {
    kind: 'sqlite',
    db,
    execute,
    types: {
      key: 'text',
      bool: 'integer',
      ms: 'integer',
      // TEXT keeps amounts exact beyond 2^53 (an INTEGER would come back as a lossy number).
      amount: 'text',
      blob: 'blob',
    },
    isUniqueViolation(err) {
      const code = (err as { errcode?: unknown } | null)?.errcode;
      return code === SQLITE_CONSTRAINT_UNIQUE || code === SQLITE_CONSTRAINT_PRIMARYKEY;
    },
    async lockConversation(trx, id) {
      // Transactions begin IMMEDIATE, so this one already holds the database's write lock.
      const row = await trx
        .selectFrom('conversations')
        .select(sql<number>`1`.as('x'))
        .where('id', '=', id)
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}
