/** `/v1/projects` and `/v1/projects/:slug`: create, list, get, patch, delete. */
import type { FastifyInstance } from 'fastify';
import { normalizeAddress } from '../../auth/addresses.ts';
import type { Deps } from '../../deps.ts';
import { ApiError } from '../../errors.ts';
import { loadProject, sameOwner } from '../../providers/access.ts';
import { checkSlug, invalid } from '../../providers/rules.ts';
import { projectCreateBody, projectPatchBody } from '../../providers/schemas.ts';
import { projectView } from '../../providers/views.ts';
import { type Chain, type Owner, type ProjectPatch, UniqueViolationError } from '../../store/store.ts';
import type { Principal } from '../authenticate.ts';
import { principalOf } from './principal.ts';

interface ProjectCreate {
  slug: string;
  name: string;
  description?: string;
  category?: string;
  owner?: { chain: Chain; address: string };
  x402Exact?: boolean;
}

export const DEFAULT_CATEGORY = 'other';

/** The owner of a new project: the caller, or whoever the operator names. */
function resolveOwner(principal: Principal, given: ProjectCreate['owner']): Owner {
  if (given) {
    const address = normalizeAddress(given.chain, given.address);
    if (!address) throw invalid('owner.address is not a valid address for owner.chain', 'invalid_address');
    const owner: Owner = { chain: given.chain, address };
    if (principal.kind === 'owner' && !sameOwner(owner, principal.owner)) {
      throw new ApiError('forbidden', 'only the operator may create a project for another owner', {
        reason: 'owner_not_caller',
      });
    }
    return owner;
  }
  if (principal.kind === 'operator') {
    throw invalid('the operator must name the owner: owner: { chain, address }', 'owner_required');
  }
  return principal.owner;
}

export function projectRoutes(scope: FastifyInstance, deps: Deps): void {
  scope.post<{ Body: ProjectCreate }>(
    '/v1/projects',
    { schema: { body: projectCreateBody } },
    async (request, reply) => {
      const principal = principalOf(request);
      const b = request.body;
      checkSlug(b.slug);
      const owner = resolveOwner(principal, b.owner);
      try {
        const project = await deps.store.projects.create({
          slug: b.slug,
          name: b.name,
          description: b.description ?? '',
          category: b.category ?? DEFAULT_CATEGORY,
          owner,
          x402Exact: b.x402Exact ?? false,
        });
        deps.catalog.invalidate(project.slug);
        request.log.info({ slug: project.slug, owner }, 'project created');
        return reply.code(201).send(projectView(project));
      } catch (e) {
        if (e instanceof UniqueViolationError) {
          throw new ApiError('conflict', `the slug "${b.slug}" is taken`, { reason: 'slug_taken' });
        }
        throw e;
      }
    },
  );

  scope.get('/v1/projects', async (request) => {
    const principal = principalOf(request);
    const projects =
      principal.kind === 'operator'
        ? await deps.store.projects.listAll()
        : await deps.store.projects.listByOwner(principal.owner);
    return { projects: projects.map(projectView) };
  });

  scope.get<{ Params: { slug: string } }>('/v1/projects/:slug', async (request) => {
    return projectView(await loadProject(deps, principalOf(request), request.params.slug));
  });

  scope.patch<{ Params: { slug: string }; Body: ProjectPatch }>(
    '/v1/projects/:slug',
    { schema: { body: projectPatchBody } },
    async (request) => {
      const project = await loadProject(deps, principalOf(request), request.params.slug);
      const updated = await deps.store.projects.update(project.id, request.body);
      if (!updated)
        throw new ApiError('not_found', `no project "${project.slug}"`, { reason: 'project_not_found' });
      deps.catalog.invalidate(project.slug);
      if (request.body.x402Exact !== undefined && request.body.x402Exact !== project.x402Exact) {
        request.log.info(
          { slug: project.slug, x402Exact: updated.x402Exact },
          'project x402 exact opt-in changed',
        );
      }
      return projectView(updated);
    },
  );

  scope.delete<{ Params: { slug: string } }>('/v1/projects/:slug', async (request, reply) => {
    const project = await loadProject(deps, principalOf(request), request.params.slug);
    await deps.store.projects.delete(project.id);
    deps.catalog.invalidate(project.slug);
    request.log.info({ slug: project.slug }, 'project deleted');
    return reply.code(204).send();
  });
}
