/**
 * A large catalogue for the "10,000 endpoints" scenario, written through the store's own
 * repositories (the same create calls the provider API makes) before the gateway starts.
 * It is spread as an operator's would be: one big API on the bench project itself, which
 * the gateway's per-project snapshot then holds and reloads, and many projects of a few
 * APIs each with their own origin (so the active health check has one target per API).
 *
 * SQLite: written into a file on /dev/shm (no fsync per row), then copied onto the disk
 * where the gateway opens it, so seeding takes seconds; the rows are the same.
 */
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseAmount, USDC_DECIMALS } from '@tollgate/protocol';
import { probeTargets } from '../../packages/gateway/src/app.ts';
import { createCatalog } from '../../packages/gateway/src/marketplace/catalog.ts';
import { openStore } from '../../packages/gateway/src/store/open-store.ts';
import type { Store } from '../../packages/gateway/src/store/store.ts';
import type { GatewayIdentity } from './scaling-stack.ts';
import { percentile } from './scaling-stats.ts';

export interface CatalogShape {
  /** Extra endpoints on the bench project's own API (beside paid, free, big). */
  benchExtra: number;
  projects: number;
  apisPerProject: number;
  endpointsPerApi: number;
}

/** 1,000 on the bench project + 300 projects × 3 APIs × 10 endpoints = 10,000. */
export function shapeFor(total: number): CatalogShape {
  const benchExtra = Math.round(total / 10);
  const apisPerProject = 3;
  const endpointsPerApi = 10;
  const projects = Math.max(1, Math.round((total - benchExtra) / (apisPerProject * endpointsPerApi)));
  return { benchExtra, projects, apisPerProject, endpointsPerApi };
}

export function endpointCount(s: CatalogShape): number {
  return s.benchExtra + s.projects * s.apisPerProject * s.endpointsPerApi;
}

const METHODS = ['GET', 'GET', 'GET', 'POST'] as const;
const PRICES = ['0.001', '0.002', '0.005', '0.01', '0.05', '0'] as const;

function endpointPath(api: number, i: number): string {
  return `v${1 + (api % 2)}/resource-${Math.floor(i / 3)}/${['list', 'get', 'search'][i % 3]}`;
}

async function seed(store: Store, s: CatalogShape, id: GatewayIdentity, upstreamBase: string): Promise<void> {
  const rails = (projectId: string) => [
    { projectId, chain: 'solana' as const, network: 'localnet', providerRecipient: id.providerSolana },
    { projectId, chain: 'sui' as const, network: 'localnet', providerRecipient: id.providerSui },
  ];
  const owner = { chain: 'solana' as const, address: id.providerSolana };
  const endpoint = (projectId: string, apiId: string, api: number, i: number) =>
    store.endpoints.create({
      projectId,
      apiId,
      method: METHODS[i % METHODS.length]!,
      path: endpointPath(api, i),
      price: parseAmount(PRICES[i % PRICES.length]!, USDC_DECIMALS),
      description: `resource ${i} of API ${api}`,
      timeoutMs: 10_000,
      enabled: true,
      inputSchema: null,
      outputSchema: null,
    });

  // The bench project, with the same single API gateway.ts publishes (it adds paid, free, big).
  const bench = await store.projects.create({
    slug: 'bench',
    name: 'Bench API',
    description: 'the bench upstream, sold per request',
    category: 'bench',
    owner,
  });
  const benchApi = await store.apis.create({
    projectId: bench.id,
    name: 'bench upstream',
    baseUrl: upstreamBase,
    authType: 'none',
    authName: null,
    authSecretEnc: null,
    authSecretLast4: null,
  });
  for (let i = 0; i < s.benchExtra; i++) await endpoint(bench.id, benchApi.id, 0, i);
  for (const r of rails(bench.id)) await store.rails.upsert(r);

  for (let p = 0; p < s.projects; p++) {
    const project = await store.projects.create({
      slug: `provider-${p}`,
      name: `Provider ${p}`,
      description: `seeded project ${p} of the scaling bench`,
      category: ['data', 'ai', 'finance', 'weather'][p % 4]!,
      owner,
    });
    for (let a = 0; a < s.apisPerProject; a++) {
      const api = await store.apis.create({
        projectId: project.id,
        name: `api ${a}`,
        // Its own origin per API (same loopback upstream, its own base path): one probe target each.
        baseUrl: `${upstreamBase}/origin/${p}/${a}`,
        authType: 'none',
        authName: null,
        authSecretEnc: null,
        authSecretLast4: null,
      });
      for (let i = 0; i < s.endpointsPerApi; i++) await endpoint(project.id, api.id, a, a * 1000 + i);
    }
    for (const r of rails(project.id)) await store.rails.upsert(r);
  }
}

/**
 * Writes the catalogue into the SQLite file at `target` (which must not exist yet), through
 * `scratch` when given. Returns the seconds it took.
 */
export async function seedCatalog(o: {
  shape: CatalogShape;
  identity: GatewayIdentity;
  upstreamBase: string;
  /** sqlite file path */
  target: string;
  /** An empty scratch dir on tmpfs (the caller removes it however the run ends), or null. */
  scratch: string | null;
}): Promise<number> {
  const started = performance.now();
  if (existsSync(o.target)) throw new Error(`${o.target} exists already`);
  const shm = o.scratch;
  const file = shm ? join(shm, 'seed.db') : o.target;
  try {
    const store = await openStore(`sqlite:${file}`);
    try {
      await seed(store, o.shape, o.identity, o.upstreamBase);
    } finally {
      // The last connection's close checkpoints the WAL into the file.
      await store.close();
    }
    if (shm) copyFileSync(file, o.target);
  } finally {
    if (shm) rmSync(shm, { recursive: true, force: true });
  }
  return (performance.now() - started) / 1000;
}

export interface CatalogWork {
  /** One snapshot load of the bench project (what the gateway does once per second per slug in use), ms. */
  snapshotMs: { p50: number; max: number; endpoints: number };
  /** Listing every project's APIs and endpoints (the active health check's target list, every 30 s), ms. */
  probeListMs: { p50: number; max: number; targets: number };
}

/**
 * Times, on the seeded file, the catalogue work the gateway does outside requests: the
 * per-slug snapshot (marketplace/catalog.ts, reloaded after its 1 s TTL) and the health
 * check's target list (app.ts's probeTargets itself). On SQLite both run on
 * the event loop, so their time is time no request is served.
 */
export async function timeCatalogWork(file: string, rounds: number): Promise<CatalogWork> {
  const store = await openStore(`sqlite:${file}`);
  try {
    const catalog = createCatalog(store, 0);
    const snap: number[] = [];
    let endpoints = 0;
    for (let i = 0; i < rounds * 10; i++) {
      const t = performance.now();
      const entry = await catalog.get('bench');
      snap.push(performance.now() - t);
      endpoints = entry?.endpoints.size ?? 0;
    }
    const list: number[] = [];
    let targets = 0;
    for (let i = 0; i < rounds; i++) {
      const t = performance.now();
      targets = (await probeTargets(store)).length;
      list.push(performance.now() - t);
    }
    return {
      snapshotMs: { p50: percentile(snap, 50), max: Math.max(...snap), endpoints },
      probeListMs: { p50: percentile(list, 50), max: Math.max(...list), targets },
    };
  } finally {
    await store.close();
  }
}
