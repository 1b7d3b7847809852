import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import { createCatalog, endpointKey } from './catalog.ts';
import { publishProject } from './publish.ts';

const TTL = 1000;
const OWNER = { chain: 'solana' as const, address: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin' };

let store: Store;
let clock = 0;
/** How many times the catalogue read the project (its first query per load). */
let loads = 0;

beforeEach(async () => {
  store = await openStore('sqlite::memory:');
  await publishProject(store, {
    slug: 'shop',
    name: 'shop',
    owner: OWNER,
    api: { name: 'upstream', baseUrl: 'https://api.example.com' },
    endpoints: [{ method: 'GET', path: 'items', price: '0.01', timeoutMs: 2000 }],
    rails: [],
  });
  const bySlug = store.projects.bySlug.bind(store.projects);
  store.projects.bySlug = (slug) => {
    loads++;
    return bySlug(slug);
  };
  clock = 0;
  loads = 0;
});
afterEach(async () => {
  await store.close();
});

const catalog = () => createCatalog(store, TTL, () => clock);

async function setPrice(price: string): Promise<void> {
  const project = await store.projects.bySlug('shop');
  const [endpoint] = await store.endpoints.list(project!.id);
  await store.endpoints.update(project!.id, endpoint!.id, { price: BigInt(Number(price) * 1e6) });
}

const priceOf = (entry: ReturnType<ReturnType<typeof catalog>['peek']>) =>
  entry?.endpoints.get(endpointKey('GET', 'items'))?.price;

describe('catalogue peek', () => {
  it('has nothing before the first load, then the snapshot get() loaded', async () => {
    const c = catalog();
    expect(c.peek('shop')).toBeUndefined();
    const entry = await c.get('shop');
    expect(c.peek('shop')).toBe(entry);
    expect(loads).toBe(1);
  });

  it('keeps answering from a stale snapshot while one background reload brings the new one', async () => {
    const c = catalog();
    await c.get('shop');
    await setPrice('0.05');
    loads = 0;
    clock = TTL + 10;
    const stale = c.peek('shop');
    expect(priceOf(stale)).toBe(10_000n);
    // Peeking again while the reload runs starts no second one.
    expect(c.peek('shop')).toBe(stale);
    await c.get('shop');
    expect(loads).toBe(1);
    expect(priceOf(c.peek('shop'))).toBe(50_000n);
  });

  it('gives nothing for a snapshot older than twice the TTL: the caller awaits get()', async () => {
    const c = catalog();
    await c.get('shop');
    clock = 2 * TTL;
    expect(c.peek('shop')).toBeUndefined();
  });

  it('drops the stale snapshot when its background reload fails: get() reports the failure', async () => {
    const c = catalog();
    await c.get('shop');
    store.projects.bySlug = () => Promise.reject(new Error('database down'));
    clock = TTL + 10;
    expect(c.peek('shop')).not.toBeUndefined();
    await expect(c.get('shop')).rejects.toThrow('database down');
    // Nothing is answered from a snapshot the store could not confirm: the route awaits get().
    expect(c.peek('shop')).toBeUndefined();
  });

  it('never caches a reload that began before invalidate(): the edit it missed would be undone', async () => {
    const c = catalog();
    await c.get('shop');
    const list = store.endpoints.list.bind(store.endpoints);
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    // The reload reads the endpoints now and lands only once released.
    store.endpoints.list = async (projectId) => {
      const rows = await list(projectId);
      await gate;
      return rows;
    };
    clock = TTL + 10;
    c.peek('shop'); // a background reload starts, reads the old price, and waits
    await new Promise((r) => setTimeout(r, 20));
    store.endpoints.list = list;
    await setPrice('0.05');
    c.invalidate('shop');
    release();
    expect(priceOf(await c.get('shop'))).toBe(50_000n);
    await new Promise((r) => setImmediate(r));
    expect(priceOf(c.peek('shop'))).toBe(50_000n);
  });

  it('gives nothing after invalidate(): a local edit is never answered from the old snapshot', async () => {
    const c = catalog();
    await c.get('shop');
    c.invalidate('shop');
    expect(c.peek('shop')).toBeUndefined();
  });
});
