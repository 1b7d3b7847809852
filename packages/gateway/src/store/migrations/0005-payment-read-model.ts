import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Backend } from '../kysely/backend.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as typed today.
type Db = Kysely<any>;

/**
 * The provider and payer read models (issue 13): what a redemption sold and for how
 * much, as columns rather than inside `meta`, so earnings and payment pages are indexed
 * queries. `project_id`/`endpoint_id` are null for inference; `amount` is the gross the
 * payer paid (sum of the splits), `fee` the platform's part; both atomic units.
 * `replays` counts answers served again from the stored response. `refund_state` is set
 * (never cleared) once the operator starts refunding an undelivered payment: from then on
 * the payment can no longer be claimed, so it is never both refunded and delivered.
 *
 * Rows written before this migration are filled from `meta` (subject, fee, splits).
 */
export function paymentReadModel(types: Backend['types']): Migration {
  const { key, amount } = types;
  return {
    async up(db: Db) {
      for (const [name, type] of [
        ['project_id', key],
        ['endpoint_id', key],
        ['amount', amount],
        ['fee', amount],
        ['refund_state', 'text'],
      ] as const) {
        await db.schema.alterTable('redemptions').addColumn(name, type).execute();
      }
      await db.schema
        .alterTable('redemptions')
        .addColumn('replays', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createIndex('redemptions_project_idx')
        .on('redemptions')
        .columns(['project_id', 'created_at_ms', 'id'])
        .execute();
      await db.schema
        .createIndex('redemptions_payer_idx')
        .on('redemptions')
        .columns(['payer', 'created_at_ms', 'id'])
        .execute();
      await db.schema
        .createIndex('redemptions_created_idx')
        .on('redemptions')
        .columns(['created_at_ms', 'id'])
        .execute();

      const rows = (await db.selectFrom('redemptions').select(['id', 'meta']).execute()) as {
        id: string;
        meta: string;
      }[];
      for (const row of rows) {
        const meta = JSON.parse(row.meta) as {
          subject?: string;
          fee?: string;
          splits?: { amount?: string }[];
        };
        const endpointId = meta.subject?.startsWith('ep:') ? meta.subject.slice(3) : null;
        let projectId: string | null = null;
        if (endpointId) {
          const ep = (await db
            .selectFrom('endpoints')
            .select('project_id')
            .where('id', '=', endpointId)
            .executeTakeFirst()) as { project_id: string } | undefined;
          projectId = ep?.project_id ?? null;
        }
        const gross = (meta.splits ?? []).reduce((s, x) => s + BigInt(x.amount ?? '0'), 0n);
        await db
          .updateTable('redemptions')
          .set({
            project_id: projectId,
            endpoint_id: endpointId,
            amount: gross.toString(),
            fee: meta.fee ?? '0',
          })
          .where('id', '=', row.id)
          .execute();
      }
    },
    async down(db: Db) {
      for (const idx of ['redemptions_project_idx', 'redemptions_payer_idx', 'redemptions_created_idx']) {
        await db.schema.dropIndex(idx).execute();
      }
      for (const name of ['replays', 'refund_state', 'fee', 'amount', 'endpoint_id', 'project_id']) {
        await db.schema.alterTable('redemptions').dropColumn(name).execute();
      }
    },
  };
}
