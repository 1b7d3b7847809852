import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.ts';
import { api, endpoint, listedProject, project } from './fixtures.ts';

export function directoryContract(get: () => Store): void {
  describe('directory listing', () => {
    it('lists only projects with an enabled endpoint and a rail, ordered by slug', async () => {
      const s = get();
      await listedProject(s, 'zeta');
      await listedProject(s, 'alpha');

      const noRail = await project(s, 'no-rail');
      await endpoint(s, { projectId: noRail.id, apiId: (await api(s, noRail.id)).id });

      const noEndpoint = await project(s, 'no-endpoint');
      await s.rails.upsert({
        projectId: noEndpoint.id,
        chain: 'sui',
        network: 'localnet',
        providerRecipient: '0x1',
      });

      const disabled = await project(s, 'disabled');
      const da = await api(s, disabled.id);
      await endpoint(s, { projectId: disabled.id, apiId: da.id }, { enabled: false });
      await s.rails.upsert({
        projectId: disabled.id,
        chain: 'sui',
        network: 'localnet',
        providerRecipient: '0x1',
      });

      // Several endpoints and rails still list the project once.
      const busy = await listedProject(s, 'busy');
      await endpoint(s, { projectId: busy.id, apiId: (await s.apis.list(busy.id))[0]!.id }, { path: 'more' });
      await s.rails.upsert({
        projectId: busy.id,
        chain: 'sui',
        network: 'localnet',
        providerRecipient: '0x1',
      });

      const slugs = async () => (await s.projects.listListed({ limit: 50 })).map((p) => p.slug);
      expect(await slugs()).toEqual(['alpha', 'busy', 'zeta']);

      // Enabling the endpoint lists the project; deleting the last rail unlists it.
      const de = (await s.endpoints.list(disabled.id))[0]!;
      await s.endpoints.update(disabled.id, de.id, { enabled: true });
      expect(await slugs()).toEqual(['alpha', 'busy', 'disabled', 'zeta']);
      await s.rails.delete(disabled.id, 'sui');
      expect(await slugs()).toEqual(['alpha', 'busy', 'zeta']);
    });

    it('searches name, description and slug case-insensitively, with wildcards taken literally', async () => {
      const s = get();
      await listedProject(s, 'forecast', { name: 'Weather Now', description: 'Rain and sun' });
      await listedProject(s, 'geo', { name: 'Maps', description: 'Geocoding for WEATHER stations' });
      await listedProject(s, 'weatherly', { name: 'Other', description: 'Stuff' });
      await listedProject(s, 'stocks', { name: 'Stocks', description: '100% real_time quotes' });
      const find = async (q: string) => (await s.projects.listListed({ q, limit: 50 })).map((p) => p.slug);

      expect(await find('weather')).toEqual(['forecast', 'geo', 'weatherly']);
      expect(await find('RAIN')).toEqual(['forecast']);
      expect(await find('toc')).toEqual(['stocks']);
      expect(await find('nothing-like-this')).toEqual([]);
      expect(await find('%')).toEqual(['stocks']);
      expect(await find('rai_')).toEqual([]);
      expect(await find('real_time')).toEqual(['stocks']);
      expect(await find('  ')).toEqual(['forecast', 'geo', 'stocks', 'weatherly']);
    });

    it('filters by category and counts listed projects per category', async () => {
      const s = get();
      await listedProject(s, 'a1', { category: 'ai' });
      await listedProject(s, 'a2', { category: 'ai' });
      await listedProject(s, 'd1', { category: 'data' });
      await project(s, 'unlisted', { category: 'finance' });
      await project(s, 'unlisted-ai', { category: 'ai' });

      expect((await s.projects.listListed({ category: 'ai', limit: 50 })).map((p) => p.slug)).toEqual([
        'a1',
        'a2',
      ]);
      expect((await s.projects.listListed({ category: 'finance', limit: 50 })).map((p) => p.slug)).toEqual(
        [],
      );
      expect((await s.projects.listListed({ category: 'ai', q: '2', limit: 50 })).map((p) => p.slug)).toEqual(
        ['a2'],
      );
      expect(await s.projects.listedCategories()).toEqual([
        { category: 'ai', count: 2 },
        { category: 'data', count: 1 },
      ]);
    });

    it('pages with the last slug as the cursor', async () => {
      const s = get();
      for (const slug of ['e', 'a', 'd', 'b', 'c']) await listedProject(s, slug);
      const page1 = await s.projects.listListed({ limit: 2 });
      expect(page1.map((p) => p.slug)).toEqual(['a', 'b']);
      const page2 = await s.projects.listListed({ limit: 2, after: page1.at(-1)!.slug });
      expect(page2.map((p) => p.slug)).toEqual(['c', 'd']);
      const page3 = await s.projects.listListed({ limit: 2, after: page2.at(-1)!.slug });
      expect(page3.map((p) => p.slug)).toEqual(['e']);
      expect(await s.projects.listListed({ limit: 2, after: 'e' })).toEqual([]);
      // The cursor combines with the search.
      expect(
        (await s.projects.listListed({ limit: 10, after: 'b', q: 'project' })).map((p) => p.slug),
      ).toEqual(['c', 'd', 'e']);
    });
  });
}
