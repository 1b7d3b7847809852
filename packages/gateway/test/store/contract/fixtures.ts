import type { Api, Endpoint, NewEndpoint, Owner, Project, Store } from '../../../src/store/store.ts';

export const alice: Owner = { chain: 'sui', address: '0xa11ce' };
export const bob: Owner = { chain: 'solana', address: 'B0bAddr1111111111111111111111111111111111' };

export async function project(
  store: Store,
  slug: string,
  extra: Partial<Omit<Project, 'id'>> = {},
): Promise<Project> {
  return store.projects.create({
    slug,
    name: extra.name ?? `Project ${slug}`,
    description: extra.description ?? `About ${slug}`,
    category: extra.category ?? 'data',
    owner: extra.owner ?? alice,
  });
}

export async function api(store: Store, projectId: string, name = 'origin'): Promise<Api> {
  return store.apis.create({
    projectId,
    name,
    baseUrl: 'https://origin.example/api',
    authType: 'bearer',
    authName: null,
    authSecretEnc: 'v1:ciphertext',
    authSecretLast4: 'abcd',
  });
}

export async function endpoint(
  store: Store,
  p: { projectId: string; apiId: string },
  extra: Partial<NewEndpoint> = {},
): Promise<Endpoint> {
  return store.endpoints.create({
    projectId: p.projectId,
    apiId: p.apiId,
    method: 'GET',
    path: 'v1/weather',
    price: 10_000n,
    description: 'Weather',
    timeoutMs: 5_000,
    enabled: true,
    inputSchema: null,
    outputSchema: null,
    ...extra,
  });
}

/** A project that the directory lists: one enabled endpoint and one rail. */
export async function listedProject(
  store: Store,
  slug: string,
  extra: Partial<Omit<Project, 'id'>> = {},
): Promise<Project> {
  const p = await project(store, slug, extra);
  const a = await api(store, p.id);
  await endpoint(store, { projectId: p.id, apiId: a.id });
  await store.rails.upsert({
    projectId: p.id,
    chain: 'solana',
    network: 'localnet',
    providerRecipient: 'Prov1der',
  });
  return p;
}
