import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Backend } from '../kysely/backend.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
type Db = Kysely<any>;

export function initialSchema(types: Backend['types']): Migration {
  const { key, bool, ms, amount, blob } = types;
  return {
    async up(db: Db) {
      await db.schema
        .createTable('projects')
        .addColumn('id', key, (c) => c.primaryKey())
        .addColumn('slug', key, (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('category', key, (c) => c.notNull())
        .addColumn('owner_chain', 'text', (c) => c.notNull())
        .addColumn('owner_address', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('projects_owner_idx')
        .on('projects')
        .columns(['owner_chain', 'owner_address'])
        .execute();

      await db.schema
        .createTable('apis')
        .addColumn('id', key, (c) => c.primaryKey())
        .addColumn('project_id', key, (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('base_url', 'text', (c) => c.notNull())
        .addColumn('auth_type', 'text', (c) => c.notNull())
        .addColumn('auth_name', 'text')
        .addColumn('auth_secret_enc', 'text')
        .addColumn('auth_secret_last4', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        // Target of the endpoints' composite key: an endpoint can only use its own project's APIs.
        .addUniqueConstraint('apis_project_id_id_key', ['project_id', 'id'])
        .execute();

      await db.schema
        .createTable('endpoints')
        .addColumn('id', key, (c) => c.primaryKey())
        .addColumn('project_id', key, (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('api_id', key, (c) => c.notNull())
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('price', amount, (c) => c.notNull())
        .addColumn('endpoint_type', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('timeout_ms', 'integer', (c) => c.notNull())
        .addColumn('enabled', bool, (c) => c.notNull())
        .addColumn('input_schema', 'text')
        .addColumn('output_schema', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('endpoints_route_key', ['project_id', 'method', 'path'])
        .addForeignKeyConstraint(
          'endpoints_api_fk',
          ['project_id', 'api_id'],
          'apis',
          ['project_id', 'id'],
          (c) => c.onDelete('cascade'),
        )
        .execute();
      await db.schema
        .createIndex('endpoints_api_idx')
        .on('endpoints')
        .columns(['project_id', 'api_id'])
        .execute();

      await db.schema
        .createTable('rails')
        .addColumn('project_id', key, (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('chain', 'text', (c) => c.notNull())
        .addColumn('network', 'text', (c) => c.notNull())
        .addColumn('provider_recipient', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('rails_pk', ['project_id', 'chain'])
        .execute();

      await db.schema
        .createTable('redemptions')
        .addColumn('id', key, (c) => c.primaryKey())
        .addColumn('chain', 'text', (c) => c.notNull())
        .addColumn('network', 'text', (c) => c.notNull())
        .addColumn('tx_id', 'text', (c) => c.notNull())
        .addColumn('nonce', 'text', (c) => c.notNull())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('requirement_id', 'text', (c) => c.notNull())
        .addColumn('payer', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('lease_until_ms', ms, (c) => c.notNull())
        .addColumn('response_status', 'integer')
        .addColumn('response_headers', 'text')
        .addColumn('response_body', blob)
        .addColumn('meta', 'text', (c) => c.notNull())
        .addColumn('created_at_ms', ms, (c) => c.notNull())
        .addColumn('delivered_at_ms', ms)
        // The two keys that make a payment single-use (DESIGN §4.4).
        .addUniqueConstraint('redemptions_tx_key', ['chain', 'network', 'tx_id'])
        .addUniqueConstraint('redemptions_nonce_key', ['nonce'])
        .addCheckConstraint(
          'redemptions_state_check',
          sql`state in ('in_progress', 'retryable', 'delivered')`,
        )
        .execute();
      await db.schema
        .createIndex('redemptions_delivered_idx')
        .on('redemptions')
        .column('delivered_at_ms')
        .execute();

      await db.schema
        .createTable('auth_challenges')
        .addColumn('nonce', key, (c) => c.primaryKey())
        .addColumn('chain', 'text', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('issued_at_ms', ms, (c) => c.notNull())
        .addColumn('expires_at_ms', ms, (c) => c.notNull())
        .addColumn('used', bool, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('sessions')
        .addColumn('token_hash', key, (c) => c.primaryKey())
        .addColumn('owner_chain', 'text', (c) => c.notNull())
        .addColumn('owner_address', 'text', (c) => c.notNull())
        .addColumn('created_at_ms', ms, (c) => c.notNull())
        .addColumn('expires_at_ms', ms, (c) => c.notNull())
        .addColumn('revoked', bool, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('conversations')
        .addColumn('id', key, (c) => c.primaryKey())
        .addColumn('owner_chain', 'text', (c) => c.notNull())
        .addColumn('owner_address', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('model', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('conversations_owner_idx')
        .on('conversations')
        .columns(['owner_chain', 'owner_address', 'id'])
        .execute();

      await db.schema
        .createTable('conversation_items')
        .addColumn('id', key, (c) => c.primaryKey())
        .addColumn('conversation_id', key, (c) =>
          c.notNull().references('conversations.id').onDelete('cascade'),
        )
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('redemption_id', 'text')
        .addColumn('usage', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('conversation_items_seq_key', ['conversation_id', 'seq'])
        .execute();
    },
  };
}
