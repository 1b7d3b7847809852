/**
 * Checks a docs page against the app: `METHOD path` pairs from the page's `### `
 * headings versus the routes Fastify serves under some prefixes.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { assembleDeps, buildApp } from '../../src/app.ts';
import { loadConfig, withConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/open-store.ts';

/** `METHOD path` pairs from the `### ` headings of docs/<page>, expanding `GET|PATCH|DELETE`. */
export function documentedRoutes(page: string): string[] {
  const doc = readFileSync(new URL(`../../../../docs/${page}`, import.meta.url), 'utf8');
  const routes: string[] = [];
  for (const heading of doc.split('\n').filter((l) => l.startsWith('### '))) {
    for (const m of heading.matchAll(/`([A-Z|]+) (\/[^`\s]+)`/g)) {
      for (const method of m[1]!.split('|')) routes.push(`${method} ${m[2]}`);
    }
  }
  return routes.sort();
}

/** `METHOD path` pairs the app serves under the prefixes (HEAD is implied by GET). */
export async function servedRoutes(prefixes: string[]): Promise<string[]> {
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
  const tree = app.printRoutes({ commonPrefix: false });
  await app.close();
  await deps.forwarder.close();
  await deps.inference.close();
  await store.close();

  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^(.*?)[├└]── (\S+) \(([A-Z, ]+)\)$/.exec(line);
    if (!m) continue;
    stack.length = m[1]!.length / 4;
    stack.push(m[2]!);
    // The tree prints a wildcard child without its slash (`/v1/models` → `*`).
    const path = stack.join('').replace(/([^/])\*$/, '$1/*');
    if (!prefixes.some((p) => path.startsWith(p))) continue;
    for (const method of m[3]!.split(', ')) if (method !== 'HEAD') routes.push(`${method} ${path}`);
  }
  return [...new Set(routes)].sort();
}
