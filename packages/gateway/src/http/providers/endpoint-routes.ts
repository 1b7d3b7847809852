/**
 * `/v1/projects/:slug/endpoints[/:endpointId]`: priced routes. The path is stored
 * in the exact form matched against `/p/:slug/*`; (method, path) is unique per project.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.ts';
import { ApiError } from '../../errors.ts';
import { loadProject } from '../../providers/access.ts';
import {
  checkJsonSchemaField,
  type EndpointMethod,
  invalid,
  normalizeEndpointPath,
  parsePrice,
} from '../../providers/rules.ts';
import { endpointCreateBody, endpointPatchBody } from '../../providers/schemas.ts';
import { endpointView } from '../../providers/views.ts';
import { type EndpointPatch, type Project, UniqueViolationError } from '../../store/store.ts';
import { principalOf } from './principal.ts';

interface EndpointFields {
  apiId: string;
  method: EndpointMethod;
  path: string;
  price: string;
  description?: string;
  timeoutMs?: number;
  enabled?: boolean;
  inputSchema?: Record<string, unknown> | null;
  outputSchema?: Record<string, unknown> | null;
}

type Params = { slug: string };
type ItemParams = { slug: string; endpointId: string };

export const DEFAULT_TIMEOUT_MS = 30_000;

function endpointNotFound(id: string): ApiError {
  return new ApiError('not_found', `no endpoint "${id}" in this project`, { reason: 'endpoint_not_found' });
}

function taken(method: string, path: string): ApiError {
  return new ApiError('conflict', `an endpoint ${method} ${path} already exists in this project`, {
    reason: 'endpoint_exists',
  });
}

async function checkApi(deps: Deps, project: Project, apiId: string): Promise<void> {
  if (!(await deps.store.apis.byId(project.id, apiId))) {
    throw invalid(`apiId "${apiId}" is not an API of this project`, 'api_not_found');
  }
}

/** Validates the fields present in a create or patch body into the store's shape. */
function toPatch(b: Partial<EndpointFields>): EndpointPatch {
  const patch: EndpointPatch = {};
  if (b.apiId !== undefined) patch.apiId = b.apiId;
  if (b.method !== undefined) patch.method = b.method;
  if (b.path !== undefined) patch.path = normalizeEndpointPath(b.path);
  if (b.price !== undefined) patch.price = parsePrice(b.price);
  if (b.description !== undefined) patch.description = b.description;
  if (b.timeoutMs !== undefined) patch.timeoutMs = b.timeoutMs;
  if (b.enabled !== undefined) patch.enabled = b.enabled;
  if (b.inputSchema !== undefined) {
    checkJsonSchemaField('inputSchema', b.inputSchema);
    patch.inputSchema = b.inputSchema;
  }
  if (b.outputSchema !== undefined) {
    checkJsonSchemaField('outputSchema', b.outputSchema);
    patch.outputSchema = b.outputSchema;
  }
  return patch;
}

export function endpointRoutes(scope: FastifyInstance, deps: Deps): void {
  const view = (project: Project, e: Parameters<typeof endpointView>[2]) =>
    endpointView(deps.config, project.slug, e);

  scope.post<{ Params: Params; Body: EndpointFields }>(
    '/v1/projects/:slug/endpoints',
    { schema: { body: endpointCreateBody } },
    async (request, reply) => {
      const project = await loadProject(deps, principalOf(request), request.params.slug);
      const p = toPatch(request.body);
      await checkApi(deps, project, request.body.apiId);
      try {
        const endpoint = await deps.store.endpoints.create({
          projectId: project.id,
          apiId: p.apiId!,
          method: p.method!,
          path: p.path!,
          price: p.price!,
          description: p.description ?? '',
          timeoutMs: p.timeoutMs ?? DEFAULT_TIMEOUT_MS,
          enabled: p.enabled ?? true,
          inputSchema: p.inputSchema ?? null,
          outputSchema: p.outputSchema ?? null,
        });
        deps.catalog.invalidate(project.slug);
        return reply.code(201).send(view(project, endpoint));
      } catch (e) {
        if (e instanceof UniqueViolationError) throw taken(p.method!, p.path!);
        throw e;
      }
    },
  );

  scope.get<{ Params: Params }>('/v1/projects/:slug/endpoints', async (request) => {
    const project = await loadProject(deps, principalOf(request), request.params.slug);
    return { endpoints: (await deps.store.endpoints.list(project.id)).map((e) => view(project, e)) };
  });

  scope.get<{ Params: ItemParams }>('/v1/projects/:slug/endpoints/:endpointId', async (request) => {
    const project = await loadProject(deps, principalOf(request), request.params.slug);
    const endpoint = await deps.store.endpoints.byId(project.id, request.params.endpointId);
    if (!endpoint) throw endpointNotFound(request.params.endpointId);
    return view(project, endpoint);
  });

  scope.patch<{ Params: ItemParams; Body: Partial<EndpointFields> }>(
    '/v1/projects/:slug/endpoints/:endpointId',
    { schema: { body: endpointPatchBody } },
    async (request) => {
      const project = await loadProject(deps, principalOf(request), request.params.slug);
      const patch = toPatch(request.body);
      if (patch.apiId !== undefined) await checkApi(deps, project, patch.apiId);
      try {
        const endpoint = await deps.store.endpoints.update(project.id, request.params.endpointId, patch);
        if (!endpoint) throw endpointNotFound(request.params.endpointId);
        deps.catalog.invalidate(project.slug);
        return view(project, endpoint);
      } catch (e) {
        if (e instanceof UniqueViolationError)
          throw taken(patch.method ?? '(same method)', patch.path ?? '(same path)');
        throw e;
      }
    },
  );

  scope.delete<{ Params: ItemParams }>('/v1/projects/:slug/endpoints/:endpointId', async (request, reply) => {
    const project = await loadProject(deps, principalOf(request), request.params.slug);
    if (!(await deps.store.endpoints.delete(project.id, request.params.endpointId))) {
      throw endpointNotFound(request.params.endpointId);
    }
    deps.catalog.invalidate(project.slug);
    return reply.code(204).send();
  });
}
