import type { Selectable } from 'kysely';
import type { Endpoint, EndpointPatch, EndpointRepo, NewEndpoint } from '../store.ts';
import type { Backend } from './backend.ts';
import { newId } from './ids.ts';
import { fromJson, nowIso, toBool, toJson } from './rows.ts';
import type { EndpointsTable } from './schema.ts';
import { translateUnique } from './unique.ts';

function toEndpoint(r: Selectable<EndpointsTable>): Endpoint {
  return {
    id: r.id,
    projectId: r.project_id,
    apiId: r.api_id,
    method: r.method,
    path: r.path,
    price: BigInt(r.price),
    endpointType: 'external_proxy',
    description: r.description,
    timeoutMs: r.timeout_ms,
    enabled: toBool(r.enabled),
    inputSchema: fromJson(r.input_schema),
    outputSchema: fromJson(r.output_schema),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Methods are stored upper-case so "get" and "GET" can never be two endpoints. */
function normMethod(method: string): string {
  return method.toUpperCase();
}

/** PostgreSQL's BIGINT bounds the price; SQLite keeps text, so check here for both. */
const MAX_PRICE = 2n ** 63n - 1n;

function amount(price: bigint): string {
  if (price < 0n || price > MAX_PRICE)
    throw new RangeError('endpoint price must be between 0 and 2^63-1 atomic units');
  return price.toString();
}

function routeTaken(method: string, path: string): string {
  return `an endpoint for ${normMethod(method)} ${path} already exists in this project`;
}

export function endpointRepo(backend: Backend): EndpointRepo {
  const { db } = backend;
  return {
    async create(e: NewEndpoint) {
      const now = nowIso();
      const row = {
        id: newId('ep'),
        project_id: e.projectId,
        api_id: e.apiId,
        method: normMethod(e.method),
        path: e.path,
        price: amount(e.price),
        endpoint_type: 'external_proxy',
        description: e.description,
        timeout_ms: e.timeoutMs,
        enabled: e.enabled,
        input_schema: toJson(e.inputSchema),
        output_schema: toJson(e.outputSchema),
        created_at: now,
        updated_at: now,
      };
      await translateUnique(backend, routeTaken(e.method, e.path), () =>
        db.insertInto('endpoints').values(row).execute(),
      );
      return toEndpoint(row);
    },

    async byId(projectId, id) {
      const r = await db
        .selectFrom('endpoints')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst();
      return r ? toEndpoint(r) : null;
    },

    async find(projectId, method, path) {
      const r = await db
        .selectFrom('endpoints')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('method', '=', normMethod(method))
        .where('path', '=', path)
        .executeTakeFirst();
      return r ? toEndpoint(r) : null;
    },

    async list(projectId) {
      const rows = await db
        .selectFrom('endpoints')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('path')
        .orderBy('method')
        .execute();
      return rows.map(toEndpoint);
    },

    async listEnabledOrigins() {
      const rows = await db
        .selectFrom('endpoints as e')
        .innerJoin('apis as a', (j) =>
          j.onRef('a.id', '=', 'e.api_id').onRef('a.project_id', '=', 'e.project_id'),
        )
        .innerJoin('projects as p', 'p.id', 'e.project_id')
        .select(['e.id as endpointId', 'p.slug as projectSlug', 'a.id as apiId', 'a.base_url as baseUrl'])
        .where('e.enabled', '=', true)
        .orderBy('a.id')
        .orderBy('e.id')
        .execute();
      return rows;
    },

    async update(projectId, id, patch: EndpointPatch) {
      const r = await translateUnique(
        backend,
        'another endpoint in this project already has this method and path',
        () =>
          db
            .updateTable('endpoints')
            .set({
              ...(patch.apiId !== undefined ? { api_id: patch.apiId } : {}),
              ...(patch.method !== undefined ? { method: normMethod(patch.method) } : {}),
              ...(patch.path !== undefined ? { path: patch.path } : {}),
              ...(patch.price !== undefined ? { price: amount(patch.price) } : {}),
              ...(patch.description !== undefined ? { description: patch.description } : {}),
              ...(patch.timeoutMs !== undefined ? { timeout_ms: patch.timeoutMs } : {}),
              ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
              ...(patch.inputSchema !== undefined ? { input_schema: toJson(patch.inputSchema) } : {}),
              ...(patch.outputSchema !== undefined ? { output_schema: toJson(patch.outputSchema) } : {}),
              updated_at: nowIso(),
            })
            .where('project_id', '=', projectId)
            .where('id', '=', id)
            .returningAll()
            .executeTakeFirst(),
      );
      return r ? toEndpoint(r) : null;
    },

    async delete(projectId, id) {
      const r = await db
        .deleteFrom('endpoints')
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst();
      return r.numDeletedRows > 0n;
    },
  };
}
