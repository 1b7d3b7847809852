import type { Selectable } from 'kysely';
import type { Chain, Rail, RailRepo } from '../store.ts';
import type { Backend } from './backend.ts';
import { nowIso } from './rows.ts';
import type { RailsTable } from './schema.ts';

function toRail(r: Selectable<RailsTable>): Rail {
  return {
    projectId: r.project_id,
    chain: r.chain as Chain,
    network: r.network,
    providerRecipient: r.provider_recipient,
    updatedAt: r.updated_at,
  };
}

export function railRepo(backend: Backend): RailRepo {
  const { db } = backend;
  return {
    async upsert(r) {
      const row = {
        project_id: r.projectId,
        chain: r.chain,
        network: r.network,
        provider_recipient: r.providerRecipient,
        updated_at: nowIso(),
      };
      const saved = await db
        .insertInto('rails')
        .values(row)
        .onConflict((oc) =>
          oc.columns(['project_id', 'chain']).doUpdateSet({
            network: row.network,
            provider_recipient: row.provider_recipient,
            updated_at: row.updated_at,
          }),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRail(saved);
    },

    async list(projectId) {
      const rows = await db
        .selectFrom('rails')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('chain')
        .execute();
      return rows.map(toRail);
    },

    async delete(projectId, chain) {
      const r = await db
        .deleteFrom('rails')
        .where('project_id', '=', projectId)
        .where('chain', '=', chain)
        .executeTakeFirst();
      return r.numDeletedRows > 0n;
    },
  };
}
