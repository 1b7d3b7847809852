import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
type Db = Kysely<any>;

/**
 * A paid conversation turn is stored once per payment: at most one user and one
 * assistant item per redemption, enforced by the database rather than by the lease
 * alone (a holder whose lease lapsed must not append the turn a second time).
 */
export const turnOncePerPayment: Migration = {
  async up(db: Db) {
    await db.schema
      .createIndex('conversation_items_redemption_role_uq')
      .on('conversation_items')
      .columns(['redemption_id', 'role'])
      .unique()
      .where(sql.ref('redemption_id'), 'is not', null)
      .execute();
  },
  async down(db: Db) {
    await db.schema.dropIndex('conversation_items_redemption_role_uq').execute();
  },
};
