import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.ts';
import { UniqueViolationError } from '../../../src/store/store.ts';
import { alice, api, bob, endpoint, project } from './fixtures.ts';

export function catalogContract(get: () => Store): void {
  describe('projects', () => {
    it('creates a project and finds it by slug, by id, by owner and in the full list', async () => {
      const s = get();
      const p = await project(s, 'weather', { name: 'Weather', description: 'Forecasts', category: 'data' });
      expect(p).toMatchObject({
        slug: 'weather',
        name: 'Weather',
        description: 'Forecasts',
        category: 'data',
        owner: alice,
      });
      expect(p.id).toMatch(/^prj_/);
      expect(Date.parse(p.createdAt)).not.toBeNaN();
      const other = await project(s, 'bobs', { owner: bob });

      expect(await s.projects.bySlug('weather')).toEqual(p);
      expect(await s.projects.byId(p.id)).toEqual(p);
      expect(await s.projects.listByOwner(alice)).toEqual([p]);
      expect(await s.projects.listByOwner(bob)).toEqual([other]);
      expect(await s.projects.listByOwner({ chain: 'solana', address: alice.address })).toEqual([]);
      expect((await s.projects.listAll()).map((x) => x.slug)).toEqual(['bobs', 'weather']);
      expect(await s.projects.bySlug('nope')).toBeNull();
      expect(await s.projects.byId('prj_nope')).toBeNull();
    });

    it('rejects a taken slug with UniqueViolationError', async () => {
      const s = get();
      await project(s, 'taken');
      await expect(project(s, 'taken', { owner: bob })).rejects.toBeInstanceOf(UniqueViolationError);
      expect(await s.projects.listAll()).toHaveLength(1);
    });

    it('updates only the patched fields and reports a missing project as null', async () => {
      const s = get();
      const p = await project(s, 'patchme');
      const u = await s.projects.update(p.id, { name: 'New name', category: 'ai' });
      expect(u).toMatchObject({
        id: p.id,
        slug: 'patchme',
        name: 'New name',
        description: p.description,
        category: 'ai',
      });
      expect(u!.createdAt).toBe(p.createdAt);
      expect(u!.updatedAt >= p.updatedAt).toBe(true);
      expect(await s.projects.byId(p.id)).toEqual(u);
      expect(await s.projects.update('prj_missing', { name: 'x' })).toBeNull();
    });

    it('deletes a project together with its APIs, endpoints and rails', async () => {
      const s = get();
      const p = await project(s, 'doomed');
      const keep = await project(s, 'keeper');
      for (const x of [p, keep]) {
        const a = await api(s, x.id);
        await endpoint(s, { projectId: x.id, apiId: a.id });
        await s.rails.upsert({
          projectId: x.id,
          chain: 'sui',
          network: 'localnet',
          providerRecipient: '0xp',
        });
      }
      const doomedApi = (await s.apis.list(p.id))[0]!;

      expect(await s.projects.delete(p.id)).toBe(true);
      expect(await s.projects.byId(p.id)).toBeNull();
      expect(await s.apis.list(p.id)).toEqual([]);
      expect(await s.apis.byId(p.id, doomedApi.id)).toBeNull();
      expect(await s.endpoints.list(p.id)).toEqual([]);
      expect(await s.endpoints.find(p.id, 'GET', 'v1/weather')).toBeNull();
      expect(await s.rails.list(p.id)).toEqual([]);
      // The other project is untouched.
      expect(await s.apis.list(keep.id)).toHaveLength(1);
      expect(await s.endpoints.list(keep.id)).toHaveLength(1);
      expect(await s.rails.list(keep.id)).toHaveLength(1);
      expect(await s.projects.delete(p.id)).toBe(false);
    });
  });

  describe('apis', () => {
    it('creates, lists, reads, updates and deletes an API within its project only', async () => {
      const s = get();
      const p = await project(s, 'p1');
      const q = await project(s, 'p2');
      const a = await api(s, p.id, 'main');
      expect(a).toMatchObject({
        projectId: p.id,
        name: 'main',
        baseUrl: 'https://origin.example/api',
        authType: 'bearer',
        authName: null,
        authSecretEnc: 'v1:ciphertext',
        authSecretLast4: 'abcd',
      });
      expect(a.id).toMatch(/^api_/);
      expect(await s.apis.byId(p.id, a.id)).toEqual(a);
      expect(await s.apis.byId(q.id, a.id)).toBeNull();
      expect(await s.apis.list(p.id)).toEqual([a]);
      expect(await s.apis.list(q.id)).toEqual([]);

      expect(await s.apis.update(q.id, a.id, { name: 'hijack' })).toBeNull();
      const u = await s.apis.update(p.id, a.id, {
        authType: 'header',
        authName: 'X-Key',
        authSecretEnc: 'v1:other',
        authSecretLast4: 'wxyz',
      });
      expect(u).toMatchObject({
        name: 'main',
        authType: 'header',
        authName: 'X-Key',
        authSecretLast4: 'wxyz',
      });
      const cleared = await s.apis.update(p.id, a.id, {
        authType: 'none',
        authSecretEnc: null,
        authSecretLast4: null,
      });
      expect(cleared).toMatchObject({ authType: 'none', authSecretEnc: null, authSecretLast4: null });

      expect(await s.apis.delete(q.id, a.id)).toBe(false);
      expect(await s.apis.delete(p.id, a.id)).toBe(true);
      expect(await s.apis.byId(p.id, a.id)).toBeNull();
      expect(await s.apis.delete(p.id, a.id)).toBe(false);
    });

    it('deleting an API deletes the endpoints that forward to it, and only those', async () => {
      const s = get();
      const p = await project(s, 'p');
      const a = await api(s, p.id, 'a');
      const b = await api(s, p.id, 'b');
      await endpoint(s, { projectId: p.id, apiId: a.id }, { path: 'a' });
      const eb = await endpoint(s, { projectId: p.id, apiId: b.id }, { path: 'b' });
      expect(await s.apis.delete(p.id, a.id)).toBe(true);
      expect(await s.endpoints.list(p.id)).toEqual([eb]);
    });
  });

  describe('endpoints', () => {
    it('lists every enabled endpoint of every project with its origin in one call, never a disabled one', async () => {
      const s = get();
      const p = await project(s, 'one');
      const q = await project(s, 'two', { owner: bob });
      const a1 = await api(s, p.id, 'first');
      const a2 = await s.apis.update(p.id, (await api(s, p.id, 'second')).id, {
        baseUrl: 'https://b.example/x',
      });
      const b1 = await api(s, q.id);
      const e1 = await endpoint(s, { projectId: p.id, apiId: a1.id }, { path: 'a' });
      const e2 = await endpoint(s, { projectId: p.id, apiId: a2!.id }, { path: 'b' });
      await endpoint(s, { projectId: p.id, apiId: a2!.id }, { path: 'off', enabled: false });
      const e3 = await endpoint(s, { projectId: q.id, apiId: b1.id }, { path: 'c' });
      const got = await s.endpoints.listEnabledOrigins();
      const want = [
        { endpointId: e1.id, projectSlug: 'one', apiId: a1.id, baseUrl: 'https://origin.example/api' },
        { endpointId: e2.id, projectSlug: 'one', apiId: a2!.id, baseUrl: 'https://b.example/x' },
        { endpointId: e3.id, projectSlug: 'two', apiId: b1.id, baseUrl: 'https://origin.example/api' },
      ];
      expect([...got].sort((x, y) => x.endpointId.localeCompare(y.endpointId))).toEqual(
        want.sort((x, y) => x.endpointId.localeCompare(y.endpointId)),
      );
      // Grouped by API: all of one API's endpoints are adjacent.
      expect(got.map((r) => r.apiId)).toEqual([...got.map((r) => r.apiId)].sort());
    });

    it('stores price as an exact bigint and the schemas as JSON', async () => {
      const s = get();
      const p = await project(s, 'p');
      const a = await api(s, p.id);
      const huge = 2n ** 62n + 7n; // beyond 2^53: a float would round it
      const e = await endpoint(
        s,
        { projectId: p.id, apiId: a.id },
        {
          price: huge,
          inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
          outputSchema: [1, 'x'],
        },
      );
      expect(e.id).toMatch(/^ep_/);
      expect(e).toMatchObject({ endpointType: 'external_proxy', timeoutMs: 5_000, enabled: true });
      const read = await s.endpoints.byId(p.id, e.id);
      expect(read).toEqual(e);
      expect(read!.price).toBe(huge);
      expect(read!.inputSchema).toEqual({ type: 'object', properties: { q: { type: 'string' } } });
      expect(read!.outputSchema).toEqual([1, 'x']);
      await expect(
        endpoint(s, { projectId: p.id, apiId: a.id }, { path: 'neg', price: -1n }),
      ).rejects.toThrow(RangeError);
      await expect(
        endpoint(s, { projectId: p.id, apiId: a.id }, { path: 'big', price: 2n ** 63n }),
      ).rejects.toThrow(RangeError);
      const free = await endpoint(
        s,
        { projectId: p.id, apiId: a.id },
        { path: 'free', price: 0n, enabled: false },
      );
      expect(await s.endpoints.byId(p.id, free.id)).toMatchObject({ price: 0n, enabled: false });
    });

    it('finds an endpoint by exact method and path within its project', async () => {
      const s = get();
      const p = await project(s, 'p');
      const q = await project(s, 'q');
      const a = await api(s, p.id);
      const e = await endpoint(s, { projectId: p.id, apiId: a.id }, { method: 'post', path: 'v1/items' });
      expect(e.method).toBe('POST');
      expect(await s.endpoints.find(p.id, 'POST', 'v1/items')).toEqual(e);
      expect(await s.endpoints.find(p.id, 'post', 'v1/items')).toEqual(e);
      expect(await s.endpoints.find(p.id, 'GET', 'v1/items')).toBeNull();
      expect(await s.endpoints.find(p.id, 'POST', 'v1/items/')).toBeNull();
      expect(await s.endpoints.find(p.id, 'POST', 'v1/Items')).toBeNull();
      expect(await s.endpoints.find(q.id, 'POST', 'v1/items')).toBeNull();
      expect(await s.endpoints.byId(q.id, e.id)).toBeNull();
    });

    it('rejects a second endpoint with the same method and path in a project', async () => {
      const s = get();
      const p = await project(s, 'p');
      const q = await project(s, 'q');
      const a = await api(s, p.id);
      const qa = await api(s, q.id);
      await endpoint(s, { projectId: p.id, apiId: a.id }, { method: 'GET', path: 'x' });
      await expect(
        endpoint(s, { projectId: p.id, apiId: a.id }, { method: 'get', path: 'x' }),
      ).rejects.toBeInstanceOf(UniqueViolationError);
      // Another method, or another project, is a different route.
      await endpoint(s, { projectId: p.id, apiId: a.id }, { method: 'POST', path: 'x' });
      await endpoint(s, { projectId: q.id, apiId: qa.id }, { method: 'GET', path: 'x' });
      const y = await endpoint(s, { projectId: p.id, apiId: a.id }, { method: 'GET', path: 'y' });
      await expect(s.endpoints.update(p.id, y.id, { path: 'x' })).rejects.toBeInstanceOf(
        UniqueViolationError,
      );
      expect(await s.endpoints.byId(p.id, y.id)).toEqual(y);
    });

    it('refuses an endpoint that forwards to another project’s API', async () => {
      const s = get();
      const p = await project(s, 'p');
      const q = await project(s, 'q');
      const foreign = await api(s, q.id);
      await expect(endpoint(s, { projectId: p.id, apiId: foreign.id })).rejects.toThrow();
      expect(await s.endpoints.list(p.id)).toEqual([]);
    });

    it('lists, updates and deletes endpoints', async () => {
      const s = get();
      const p = await project(s, 'p');
      const a = await api(s, p.id, 'a');
      const b = await api(s, p.id, 'b');
      const e1 = await endpoint(s, { projectId: p.id, apiId: a.id }, { path: 'b/one' });
      const e2 = await endpoint(s, { projectId: p.id, apiId: a.id }, { path: 'a/two' });
      expect(await s.endpoints.list(p.id)).toEqual([e2, e1]);

      const u = await s.endpoints.update(p.id, e1.id, {
        apiId: b.id,
        price: 42n,
        enabled: false,
        timeoutMs: 100,
        description: 'changed',
        inputSchema: { type: 'string' },
      });
      expect(u).toMatchObject({
        id: e1.id,
        apiId: b.id,
        path: 'b/one',
        price: 42n,
        enabled: false,
        timeoutMs: 100,
      });
      expect(u!.inputSchema).toEqual({ type: 'string' });
      expect(await s.endpoints.byId(p.id, e1.id)).toEqual(u);
      const back = await s.endpoints.update(p.id, e1.id, { inputSchema: null, enabled: true });
      expect(back).toMatchObject({ inputSchema: null, enabled: true, price: 42n });
      expect(await s.endpoints.update(p.id, 'ep_missing', { price: 1n })).toBeNull();

      expect(await s.endpoints.delete(p.id, e2.id)).toBe(true);
      expect(await s.endpoints.delete(p.id, e2.id)).toBe(false);
      expect((await s.endpoints.list(p.id)).map((e) => e.id)).toEqual([e1.id]);
    });
  });

  describe('rails', () => {
    it('upserts one rail per chain, lists and deletes them', async () => {
      const s = get();
      const p = await project(s, 'p');
      const r1 = await s.rails.upsert({
        projectId: p.id,
        chain: 'sui',
        network: 'localnet',
        providerRecipient: '0x1',
      });
      expect(r1).toMatchObject({
        projectId: p.id,
        chain: 'sui',
        network: 'localnet',
        providerRecipient: '0x1',
      });
      expect(Date.parse(r1.updatedAt)).not.toBeNaN();
      const r2 = await s.rails.upsert({
        projectId: p.id,
        chain: 'sui',
        network: 'mainnet',
        providerRecipient: '0x2',
      });
      expect(r2).toMatchObject({ chain: 'sui', network: 'mainnet', providerRecipient: '0x2' });
      const r3 = await s.rails.upsert({
        projectId: p.id,
        chain: 'solana',
        network: 'localnet',
        providerRecipient: 'So1',
      });
      expect(await s.rails.list(p.id)).toEqual([r3, r2]);

      expect(await s.rails.delete(p.id, 'sui')).toBe(true);
      expect(await s.rails.delete(p.id, 'sui')).toBe(false);
      expect(await s.rails.list(p.id)).toEqual([r3]);
    });
  });
}
