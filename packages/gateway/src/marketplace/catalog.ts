/**
 * Hot-path view of providers' projects: one snapshot per slug (project, endpoints
 * by "METHOD path", APIs, rails), cached for a short TTL so a 402 costs no database
 * round trip. Several gateway processes may each be up to `ttlMs` stale after a
 * provider edit; a quote is signed into its token, so staleness never mis-charges.
 *
 * A reload keeps the last snapshot's object for every row that did not change (each field
 * equal, schemas compared whole), and the whole last snapshot when nothing did: what the
 * hot path builds once per endpoint object (its quote, the 402's template, the token's quote
 * part) then lives as long as the endpoint stays as it is, instead of being built again, and
 * left to the collector, once per TTL.
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
    const next: CatalogEntry = {
      project,
      endpoints: new Map(endpoints.map((e) => [endpointKey(e.method, e.path), e])),
      apis: new Map(apis.map((a) => [a.id, a])),
      rails,
    };
    return sharedWith(cache.get(slug)?.entry ?? null, next);
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

/** `next` with `prev`'s object for each unchanged row; `prev` itself when nothing changed. */
function sharedWith(prev: CatalogEntry | null, next: CatalogEntry): CatalogEntry {
  if (prev === null) return next;
  const project = sameValue(prev.project, next.project) ? prev.project : next.project;
  const endpoints = sharedRows(prev.endpoints, next.endpoints);
  const apis = sharedRows(prev.apis, next.apis);
  const rails = sameValue(prev.rails, next.rails) ? prev.rails : next.rails;
  if (project === prev.project && endpoints === prev.endpoints && apis === prev.apis && rails === prev.rails)
    return prev;
  return { project, endpoints, apis, rails };
}

/** `next` with `prev`'s row wherever a key's row is unchanged; `prev` itself when every key and row (in order) is. */
function sharedRows<T>(prev: Map<string, T>, next: Map<string, T>): Map<string, T> {
  const rows = new Map<string, T>();
  let same = prev.size === next.size;
  const old = prev.keys();
  for (const [key, row] of next) {
    const was = prev.get(key);
    const kept = was !== undefined && sameValue(was, row) ? was : row;
    if (kept !== was || old.next().value !== key) same = false;
    rows.set(key, kept);
  }
  return same ? prev : rows;
}

/**
 * Equal as stored values: primitives (bigint included) by value, arrays and plain objects
 * (a row, a schema) key by key; anything else only when it is the same object. Walked with
 * its own stack, not by recursion: a provider's schema (16 KB of JSON) may nest thousands deep.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  const pending: unknown[] = [a, b];
  while (pending.length > 0) {
    const y = pending.pop();
    const x = pending.pop();
    if (Object.is(x, y)) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) pending.push(x[i], y[i]);
      continue;
    }
    if (!isPlain(x) || !isPlain(y) || Array.isArray(y)) return false;
    const keys = Object.keys(x);
    if (keys.length !== Object.keys(y).length) return false;
    for (const k of keys) {
      if (!Object.hasOwn(y, k)) return false;
      pending.push((x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k]);
    }
  }
  return true;
}

function isPlain(o: object): boolean {
  const proto = Object.getPrototypeOf(o);
  return proto === Object.prototype || proto === null;
}
