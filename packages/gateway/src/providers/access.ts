/**
 * Who may touch a project. An owner sees only their own projects; someone
 * else's project answers 404 exactly like a missing one, so slugs of other
 * owners' projects cannot be probed. The operator sees everything.
 */

import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import type { Principal } from '../http/authenticate.ts';
import type { Owner, Project } from '../store/store.ts';
import { isSlug } from './rules.ts';

export function sameOwner(a: Owner, b: Owner): boolean {
  return a.chain === b.chain && a.address === b.address;
}

export function canAccess(principal: Principal, project: Project): boolean {
  return principal.kind === 'operator' || sameOwner(principal.owner, project.owner);
}

export async function loadProject(deps: Deps, principal: Principal, slug: string): Promise<Project> {
  // A path parameter is raw caller input: a non-slug (e.g. with a NUL, which Postgres
  // rejects in text) is simply not found, without a query.
  const project = isSlug(slug) ? await deps.store.projects.bySlug(slug) : null;
  if (!project || !canAccess(principal, project)) {
    throw new ApiError('not_found', `no project "${slug}"`, { reason: 'project_not_found' });
  }
  return project;
}
