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

  /** Bumped by invalidate(): a load that began before it must not be cached or shared. */
  let generation = 0;

  /** The one load of `slug` under way (shared by every caller), cached when it lands. */
  function reload(slug: string): Promise<CatalogEntry | null> {
    let pending = loading.get(slug);
    if (!pending) {
      const startedIn = generation;
      const started: Promise<CatalogEntry | null> = load(slug)
        .then((entry) => {
          // A provider edit invalidated the slug while this load ran: it may predate the edit.
          if (startedIn !== generation) return entry;
          if (cache.size >= MAX_ENTRIES && !cache.has(slug))
            cache.delete(cache.keys().next().value as string);
          cache.set(slug, { at: now(), entry });
          return entry;
        })
        .finally(() => {
          if (loading.get(slug) === started) loading.delete(slug);
        });
      pending = started;
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
     * the hot path does not fall back to the awaiting route once per TTL. A failed reload
     * drops that snapshot: nothing is answered from one the store could not confirm, and
     * the route's get() reports the failure. undefined for a miss or an older entry: the
     * caller leaves the request to get().
     */
    peek(slug: string): CatalogEntry | null | undefined {
      const hit = cache.get(slug);
      if (!hit) return undefined;
      const age = now() - hit.at;
      if (age < ttlMs) return hit.entry;
      if (age >= 2 * ttlMs) return undefined;
      reload(slug).catch(() => {
        if (cache.get(slug) === hit) cache.delete(slug);
      });
      return hit.entry;
    },
    /** Drops cached snapshots (all, or one slug) after a local provider edit. */
    invalidate(slug?: string): void {
      generation += 1;
      if (slug === undefined) {
        cache.clear();
        loading.clear();
      } else {
        cache.delete(slug);
        loading.delete(slug);
      }
    },
  };
}

export type Catalog = ReturnType<typeof createCatalog>;
