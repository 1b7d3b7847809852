import type { Selectable } from 'kysely';
import type { Api, ApiPatch, ApiRepo, NewApi, OriginAuthType } from '../store.ts';
import type { Backend } from './backend.ts';
import { newId } from './ids.ts';
import { nowIso } from './rows.ts';
import type { ApisTable } from './schema.ts';

function toApi(r: Selectable<ApisTable>): Api {
  return {
    id: r.id,
    projectId: r.project_id,
    name: r.name,
    baseUrl: r.base_url,
    authType: r.auth_type as OriginAuthType,
    authName: r.auth_name,
    authSecretEnc: r.auth_secret_enc,
    authSecretLast4: r.auth_secret_last4,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function apiRepo(backend: Backend): ApiRepo {
  const { db } = backend;
  return {
    async create(a: NewApi) {
      const now = nowIso();
      const row = {
        id: newId('api'),
        project_id: a.projectId,
        name: a.name,
        base_url: a.baseUrl,
        auth_type: a.authType,
        auth_name: a.authName,
        auth_secret_enc: a.authSecretEnc,
        auth_secret_last4: a.authSecretLast4,
        created_at: now,
        updated_at: now,
      };
      await db.insertInto('apis').values(row).execute();
      return toApi(row);
    },

    async byId(projectId, id) {
      const r = await db
        .selectFrom('apis')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst();
      return r ? toApi(r) : null;
    },

    async list(projectId) {
      const rows = await db
        .selectFrom('apis')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute();
      return rows.map(toApi);
    },

    async update(projectId, id, patch: ApiPatch) {
      const r = await db
        .updateTable('apis')
        .set({
          ...(patch.name !== undefined ? { name: patch.name } : {}),
          ...(patch.baseUrl !== undefined ? { base_url: patch.baseUrl } : {}),
          ...(patch.authType !== undefined ? { auth_type: patch.authType } : {}),
          ...(patch.authName !== undefined ? { auth_name: patch.authName } : {}),
          ...(patch.authSecretEnc !== undefined ? { auth_secret_enc: patch.authSecretEnc } : {}),
          ...(patch.authSecretLast4 !== undefined ? { auth_secret_last4: patch.authSecretLast4 } : {}),
          updated_at: nowIso(),
        })
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return r ? toApi(r) : null;
    },

    async delete(projectId, id) {
      // Its endpoints go with it (ON DELETE CASCADE on the (project_id, api_id) key).
      const r = await db
        .deleteFrom('apis')
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst();
      return r.numDeletedRows > 0n;
    },
  };
}
