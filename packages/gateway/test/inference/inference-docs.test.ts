/** docs/inference.md documents exactly the inference and conversation routes the app serves. */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assembleDeps, buildApp } from '../../src/app.ts';
import { loadConfig, withConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/open-store.ts';

const doc = readFileSync(new URL('../../../../docs/inference.md', import.meta.url), 'utf8');
const PREFIXES = ['/v1/models', '/v1/pricing', '/v1/chat', '/v1/embeddings', '/v1/conversations'];

function documentedRoutes(): string[] {
  const routes: string[] = [];
  for (const heading of doc.split('\n').filter((l) => l.startsWith('### '))) {
    for (const m of heading.matchAll(/`([A-Z|]+) (\/[^`\s]+)`/g)) {
      for (const method of m[1]!.split('|')) routes.push(`${method} ${m[2]}`);
    }
  }
  return routes.sort();
}

function servedRoutes(tree: string): string[] {
  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^(.*?)[├└]── (\S+) \(([A-Z, ]+)\)$/.exec(line);
    if (!m) continue;
    stack.length = m[1]!.length / 4;
    stack.push(m[2]!);
    // The tree prints a wildcard child without its slash (`/v1/models` → `*`).
    const path = stack.join('').replace(/([^/])\*$/, '$1/*');
    if (!PREFIXES.some((p) => path.startsWith(p))) continue;
    for (const method of m[3]!.split(', ')) if (method !== 'HEAD') routes.push(`${method} ${path}`);
  }
  return routes;
}

describe('docs/inference.md', () => {
  it('lists exactly the routes the gateway serves for inference and conversations', async () => {
    const config = withConfig(
      loadConfig({ TOLLGATE_SECRET: randomBytes(32).toString('hex'), LOG_LEVEL: 'silent' }, []),
      {
        databaseUrl: 'sqlite::memory:',
      },
    );
    const store = await openStore(config.databaseUrl);
    const deps = assembleDeps(config, store, {});
    const app = await buildApp(deps, { logger: false });
    await app.ready();
    const served = servedRoutes(app.printRoutes({ commonPrefix: false }));
    await app.close();
    await deps.inference.close();
    await store.close();
    expect(served.length).toBeGreaterThan(10);
    expect(documentedRoutes()).toEqual([...new Set(served)].sort());
  });
});
