/**
 * Public directory views (SPEC §4.3). Only what a payer needs: never the
 * origin URL (that would let callers bypass payment), the API ids or secrets.
 */
import type { Deps } from '../deps.ts';
import type { Endpoint, Project, Rail } from '../store/store.ts';
import { platformRecipient, pricing, protectedUrl, railAsset } from './views.ts';

export interface Listing {
  project: Project;
  endpoints: Endpoint[];
  rails: Rail[];
}

/** Rails a payer can actually use on this gateway (right network, platform recipient configured). */
function payableRails(deps: Deps, rails: Rail[]): Rail[] {
  return rails
    .filter((r) => r.network === deps.config.chainNetwork && platformRecipient(deps.config, r.chain) !== null)
    .sort((a, b) => a.chain.localeCompare(b.chain));
}

/**
 * A project's public listing, read through the catalogue cache the /p route uses,
 * so a busy directory costs no more database round trips than paid traffic does.
 */
export async function loadListing(deps: Deps, slug: string): Promise<Listing | null> {
  const entry = await deps.catalog.get(slug);
  if (!entry) return null;
  return {
    project: entry.project,
    endpoints: [...entry.endpoints.values()],
    rails: payableRails(deps, entry.rails),
  };
}

export function isListed(l: Listing): boolean {
  return l.rails.length > 0 && l.endpoints.some((e) => e.enabled);
}

function available(deps: Deps, e: Endpoint): boolean {
  return e.enabled && deps.health.isHealthy(e.id);
}

export function directorySummary(deps: Deps, l: Listing) {
  const p = l.project;
  return {
    slug: p.slug,
    name: p.name,
    description: p.description,
    category: p.category,
    url: `${deps.config.publicBaseUrl}/v1/directory/apis/${p.slug}`,
    chains: l.rails.map((r) => r.chain),
    endpointCount: l.endpoints.filter((e) => e.enabled).length,
  };
}

export function directoryDetail(deps: Deps, l: Listing) {
  return {
    ...directorySummary(deps, l),
    rails: l.rails.map((r) => ({ chain: r.chain, network: r.network, asset: railAsset(r.chain) })),
    endpoints: l.endpoints
      .slice()
      .sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method))
      .map((e) => ({
        method: e.method,
        path: e.path,
        endpointType: e.endpointType,
        protectedUrl: protectedUrl(deps.config, l.project.slug, e.path),
        ...pricing(deps.config, e.price),
        asset: 'USDC' as const,
        description: e.description,
        timeoutMs: e.timeoutMs,
        available: available(deps, e),
        inputSchema: e.inputSchema ?? null,
        outputSchema: e.outputSchema ?? null,
      })),
  };
}

export interface DirectoryPageQuery {
  q?: string;
  category?: string;
  /** The last slug of the previous page. */
  after?: string;
  limit: number;
}

/**
 * One page of listed APIs (search, category, keyset by slug): the query behind both
 * GET /v1/directory/apis and the web directory. `nextAfter` is the slug to continue from.
 */
export async function listDirectory(
  deps: Deps,
  query: DirectoryPageQuery,
): Promise<{ listings: Listing[]; nextAfter: string | null }> {
  const { q, category, after, limit } = query;
  const projects = await deps.store.projects.listListed({
    ...(q ? { q } : {}),
    ...(category ? { category } : {}),
    ...(after ? { after } : {}),
    limit: limit + 1,
  });
  const page = projects.slice(0, limit);
  const listings = await Promise.all(page.map((p) => loadListing(deps, p.slug)));
  return {
    listings: listings.filter((l): l is Listing => l !== null && isListed(l)),
    nextAfter: projects.length > limit ? page[page.length - 1]!.slug : null,
  };
}
