/** docs/web.md documents exactly the web routes the gateway serves (the directory, the console, assets). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assembleDeps, buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/open-store.ts';
import { documentedRoutes, servedRoutes } from '../support/doc-routes.ts';

const WEB_ROUTE = /^GET \/(assets|console|directory)?(\/|$)/;

describe('docs/web.md', () => {
  it('documents every web route the gateway serves, and only those', async () => {
    // The headings parser needs a character after the slash: `GET /` is added by hand.
    const doc = readFileSync(new URL('../../../../docs/web.md', import.meta.url), 'utf8');
    expect(doc).toContain('### `GET /`\n');
    const documented = ['GET /', ...documentedRoutes('web.md')];
    expect(documented.length).toBeGreaterThanOrEqual(7);
    // Fastify's route tree print leaves out wildcards under a static prefix (/assets/*): ask it directly too.
    const config = loadConfig(
      { TOLLGATE_SECRET: 'x'.repeat(40), LOG_LEVEL: 'silent', DATABASE_URL: 'sqlite::memory:' },
      [],
    );
    const store = await openStore(config.databaseUrl);
    const app = await buildApp(assembleDeps(config, store, {}), { logger: false });
    await app.ready();
    try {
      for (const route of documented) {
        const [method, url] = route.split(' ') as [string, string];
        expect(app.hasRoute({ method: method as 'GET', url }), route).toBe(true);
      }
    } finally {
      await app.close();
      await store.close();
    }
    const served = (await servedRoutes(['/'])).filter((r) => WEB_ROUTE.test(r) && r !== 'GET /*');
    expect(served.length).toBeGreaterThanOrEqual(5);
    for (const route of served) expect(documented, route).toContain(route);
  });
});
