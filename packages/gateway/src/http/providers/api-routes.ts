/** `/v1/projects/:slug/apis[/:apiId]`: the provider's origins and how the gateway authenticates to them. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.ts';
import { ApiError } from '../../errors.ts';
import { loadProject } from '../../providers/access.ts';
import { checkedBaseUrl } from '../../providers/origin.ts';
import { type OriginAuthInput, sealOriginAuth } from '../../providers/origin-auth.ts';
import { apiCreateBody, apiPatchBody } from '../../providers/schemas.ts';
import { apiView } from '../../providers/views.ts';
import type { ApiPatch } from '../../store/store.ts';
import { principalOf } from './principal.ts';

type Params = { slug: string };
type ItemParams = { slug: string; apiId: string };

function apiNotFound(id: string): ApiError {
  return new ApiError('not_found', `no API "${id}" in this project`, { reason: 'api_not_found' });
}

export function apiRoutes(scope: FastifyInstance, deps: Deps): void {
  scope.post<{ Params: Params; Body: { name: string; baseUrl: string; auth?: OriginAuthInput } }>(
    '/v1/projects/:slug/apis',
    { schema: { body: apiCreateBody } },
    async (request, reply) => {
      const project = await loadProject(deps, principalOf(request), request.params.slug);
      const b = request.body;
      const baseUrl = await checkedBaseUrl(deps, b.baseUrl);
      const api = await deps.store.apis.create({
        projectId: project.id,
        name: b.name,
        baseUrl,
        ...sealOriginAuth(b.auth ?? null, deps.secretBox),
      });
      deps.catalog.invalidate(project.slug);
      request.log.info({ slug: project.slug, apiId: api.id, authType: api.authType }, 'api registered');
      return reply.code(201).send(apiView(api));
    },
  );

  scope.get<{ Params: Params }>('/v1/projects/:slug/apis', async (request) => {
    const project = await loadProject(deps, principalOf(request), request.params.slug);
    return { apis: (await deps.store.apis.list(project.id)).map(apiView) };
  });

  scope.get<{ Params: ItemParams }>('/v1/projects/:slug/apis/:apiId', async (request) => {
    const project = await loadProject(deps, principalOf(request), request.params.slug);
    const api = await deps.store.apis.byId(project.id, request.params.apiId);
    if (!api) throw apiNotFound(request.params.apiId);
    return apiView(api);
  });

  scope.patch<{
    Params: ItemParams;
    Body: { name?: string; baseUrl?: string; auth?: OriginAuthInput | null };
  }>('/v1/projects/:slug/apis/:apiId', { schema: { body: apiPatchBody } }, async (request) => {
    const project = await loadProject(deps, principalOf(request), request.params.slug);
    const b = request.body;
    const patch: ApiPatch = {};
    if (b.name !== undefined) patch.name = b.name;
    if (b.baseUrl !== undefined) patch.baseUrl = await checkedBaseUrl(deps, b.baseUrl);
    if (b.auth !== undefined) Object.assign(patch, sealOriginAuth(b.auth, deps.secretBox));
    const api = await deps.store.apis.update(project.id, request.params.apiId, patch);
    if (!api) throw apiNotFound(request.params.apiId);
    deps.catalog.invalidate(project.slug);
    return apiView(api);
  });

  scope.delete<{ Params: ItemParams }>('/v1/projects/:slug/apis/:apiId', async (request, reply) => {
    const project = await loadProject(deps, principalOf(request), request.params.slug);
    if (!(await deps.store.apis.delete(project.id, request.params.apiId)))
      throw apiNotFound(request.params.apiId);
    deps.catalog.invalidate(project.slug);
    return reply.code(204).send();
  });
}
