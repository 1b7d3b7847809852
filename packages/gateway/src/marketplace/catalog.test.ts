import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import { createCatalog, endpointKey, sameValue } from './catalog.ts';
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

describe('catalogue reloads', () => {
  const OTHER = endpointKey('POST', 'orders');
  async function addOrders(): Promise<void> {
    const project = await store.projects.bySlug('shop');
    const [api] = await store.apis.list(project!.id);
    await store.endpoints.create({
      projectId: project!.id,
      apiId: api!.id,
      method: 'POST',
      path: 'orders',
      price: 20_000n,
      description: '',
      timeoutMs: 2000,
      enabled: true,
      inputSchema: { type: 'object', properties: { qty: { type: 'integer' } } },
      outputSchema: null,
    });
  }
  const reload = async (c: ReturnType<typeof catalog>) => {
    clock += TTL + 10;
    return c.get('shop');
  };

  it('gives the same snapshot when nothing changed, so what was built on its objects is kept', async () => {
    const c = catalog();
    const first = await c.get('shop');
    const again = await reload(c);
    expect(loads).toBe(2);
    expect(again).toBe(first);
    expect(c.peek('shop')).toBe(first);
  });

  it('gives an edited endpoint a new object and keeps every unchanged row', async () => {
    await addOrders();
    const c = catalog();
    const first = (await c.get('shop'))!;
    await setPrice('0.05');
    const next = (await reload(c))!;
    expect(next).not.toBe(first);
    expect(priceOf(next)).toBe(50_000n);
    expect(next.endpoints.get(endpointKey('GET', 'items'))).not.toBe(
      first.endpoints.get(endpointKey('GET', 'items')),
    );
    expect(next.endpoints.get(OTHER)).toBe(first.endpoints.get(OTHER));
    expect(next.project).toBe(first.project);
    expect(next.rails).toBe(first.rails);
    expect([...next.apis.values()]).toEqual([...first.apis.values()]);
    expect(next.apis.get([...first.apis.keys()][0]!)).toBe([...first.apis.values()][0]);
  });

  it('sees a change deep inside a schema, and an endpoint added or removed', async () => {
    await addOrders();
    const c = catalog();
    const first = (await c.get('shop'))!;
    const orders = first.endpoints.get(OTHER)!;
    await store.endpoints.update(orders.projectId, orders.id, {
      inputSchema: { type: 'object', properties: { qty: { type: 'number' } } },
    });
    const edited = (await reload(c))!;
    expect(edited.endpoints.get(OTHER)).not.toBe(orders);
    expect(edited.endpoints.get(OTHER)!.inputSchema).toEqual({
      type: 'object',
      properties: { qty: { type: 'number' } },
    });
    await store.endpoints.delete(orders.projectId, orders.id);
    const removed = (await reload(c))!;
    expect(removed).not.toBe(edited);
    expect(removed.endpoints.has(OTHER)).toBe(false);
  });

  it('gives new rails when a rail changes, and keeps the endpoints', async () => {
    const c = catalog();
    const first = (await c.get('shop'))!;
    await store.rails.upsert({
      projectId: first.project.id,
      chain: 'solana',
      network: 'solana:sandbox',
      providerRecipient: OWNER.address,
    });
    const next = (await reload(c))!;
    expect(next.rails).not.toBe(first.rails);
    expect(next.rails).toHaveLength(1);
    expect(next.endpoints.get(endpointKey('GET', 'items'))).toBe(
      first.endpoints.get(endpointKey('GET', 'items')),
    );
  });
});

describe('sameValue (what a reload compares rows with)', () => {
  it('compares primitives, bigints, arrays and plain objects by value, key by key', () => {
    expect(sameValue(10_000n, 10_000n)).toBe(true);
    expect(sameValue(10_000n, 10_001n)).toBe(false);
    expect(sameValue(1, 1n)).toBe(false);
    expect(sameValue(null, undefined)).toBe(false);
    expect(sameValue({ a: [1, { b: 'x' }] }, { a: [1, { b: 'x' }] })).toBe(true);
    expect(sameValue({ a: [1, { b: 'x' }] }, { a: [1, { b: 'y' }] })).toBe(false);
    expect(sameValue({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(sameValue({ a: 1, b: undefined }, { a: 1, c: undefined })).toBe(false);
    expect(sameValue([1, 2], { 0: 1, 1: 2 })).toBe(false);
    expect(sameValue({ 0: 1, 1: 2 }, [1, 2])).toBe(false);
    expect(sameValue([1, 2], [1, 2, 3])).toBe(false);
  });

  it('compares values nested deeper than the call stack goes (a schema is 16 KB of JSON: 16,000 arrays deep)', () => {
    const deep = (n: number, leaf: unknown) => {
      let v: unknown = leaf;
      for (let i = 0; i < n; i++) v = i % 2 ? [v] : { a: v };
      return v;
    };
    expect(sameValue(deep(100_000, 1), deep(100_000, 1))).toBe(true);
    expect(sameValue(deep(100_000, 1), deep(100_000, 2))).toBe(false);
  });

  it('counts anything but a plain object or array equal only to itself', () => {
    const d = new Date(0);
    expect(sameValue(d, d)).toBe(true);
    expect(sameValue(new Date(0), new Date(0))).toBe(false);
    expect(sameValue(new Map([[1, 1]]), new Map([[1, 2]]))).toBe(false);
    expect(sameValue(Object.create(null), {})).toBe(true);
  });
});
