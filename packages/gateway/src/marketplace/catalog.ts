/**
 * Hot-path view of providers' projects: one snapshot per slug (project, endpoints
 * by "METHOD path", APIs, rails), cached for a short TTL so a 402 costs no database
 * round trip. Several gateway processes may each be up to `ttlMs` stale after a
 * provider edit; a quote is signed into its token, so staleness never mis-charges.
 */
import type { Api, Endpoint, Project, Rail, Store } from '../store/store.ts';

export interface CatalogEntry {
  project: Project;
  endpoints: Map<string, Endpoint>;
  apis: Map<string, Api>;
  rails: Rail[];
}

const MAX_ENTRIES = 10_000;

export function endpointKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path}`;
}

export function createCatalog(store: Store, ttlMs: number, now: () => number = Date.now) {
  const cache = new Map<string, { at: number; entry: CatalogEntry | null }>();
  const loading = new Map<string, Promise<CatalogEntry | null>>();

  async function load(slug: string): Promise<CatalogEntry | null> {
    const project = await store.projects.bySlug(slug);
    if (!project) return null;
    const [endpoints, apis, rails] = await Promise.all([
      store.endpoints.list(project.id),
      store.apis.list(project.id),
      store.rails.list(project.id),
    ]);
    return {
      project,
      endpoints: new Map(endpoints.map((e) => [endpointKey(e.method, e.path), e])),
      apis: new Map(apis.map((a) => [a.id, a])),
      rails,
    };
  }

  /** The one load of `slug` under way (shared by every caller), cached when it lands. */
  function reload(slug: string): Promise<CatalogEntry | null> {
    let pending = loading.get(slug);
    if (!pending) {
      pending = load(slug)
        .then((entry) => {
          if (cache.size >= MAX_ENTRIES && !cache.has(slug))
            cache.delete(cache.keys().next().value as string);
          cache.set(slug, { at: now(), entry });
          return entry;
        })
        .finally(() => loading.delete(slug));
      loading.set(slug, pending);
    }
    return pending;
  }

  return {
    async get(slug: string): Promise<CatalogEntry | null> {
      const hit = cache.get(slug);
      if (hit && now() - hit.at < ttlMs) return hit.entry;
      return reload(slug);
    },
    /**
     * The cached snapshot without waiting, for a synchronous caller (the fast path,
     * http/fast-unpaid.ts). A fresh one as get() would give it. One past its TTL but
     * younger than twice the TTL is still given while a reload runs in the background, so
     * the hot path does not fall back to the awaiting route once per TTL; a failed reload
     * is left to get() to report (the route awaits it and answers the error). undefined
     * for a miss or an older entry: the caller leaves the request to get().
     */
    peek(slug: string): CatalogEntry | null | undefined {
      const hit = cache.get(slug);
      if (!hit) return undefined;
      const age = now() - hit.at;
      if (age < ttlMs) return hit.entry;
      if (age >= 2 * ttlMs) return undefined;
      // The route's get() reports a failure; this one only refreshes.
      reload(slug).catch(() => undefined);
      return hit.entry;
    },
    /** Drops cached snapshots (all, or one slug) after a local provider edit. */
    invalidate(slug?: string): void {
      if (slug === undefined) cache.clear();
      else cache.delete(slug);
    },
  };
}

export type Catalog = ReturnType<typeof createCatalog>;
