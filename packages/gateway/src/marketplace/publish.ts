/**
 * Publishes a project straight through the store: the project, one API origin, its
 * endpoints and rails. Idempotent (an existing slug is reused, the origin URL updated,
 * missing endpoints added, rails upserted). Used by sandbox mode, the bench and tests;
 * providers publish through the HTTP API instead.
 */
import { parseAmount, USDC_DECIMALS } from '@tollgate/protocol';
import type { Api, Chain, Endpoint, Owner, Project, Store } from '../store/store.ts';

export interface PublishSpec {
  slug: string;
  name: string;
  description?: string;
  category?: string;
  owner: Owner;
  /** Stock x402 v2 clients may pay it (the whole amount to the platform, the provider's share a payable). */
  x402Exact?: boolean;
  api: {
    name: string;
    baseUrl: string;
    /** Already sealed with the gateway's secret box. */
    auth?: {
      type: 'bearer' | 'header' | 'query';
      name: string | null;
      secretEnc: string;
      secretLast4: string | null;
    };
  };
  endpoints: {
    method: string;
    path: string;
    price: string;
    description?: string;
    timeoutMs?: number;
    enabled?: boolean;
  }[];
  rails: { chain: Chain; network: string; providerRecipient: string }[];
}

export interface Published {
  project: Project;
  api: Api;
  /** By path, in the order given. */
  endpoints: Endpoint[];
}

export async function publishProject(store: Store, spec: PublishSpec): Promise<Published> {
  const project =
    (await store.projects.bySlug(spec.slug)) ??
    (await store.projects.create({
      slug: spec.slug,
      name: spec.name,
      description: spec.description ?? '',
      category: spec.category ?? 'other',
      owner: spec.owner,
      ...(spec.x402Exact !== undefined ? { x402Exact: spec.x402Exact } : {}),
    }));
  if (spec.x402Exact !== undefined && project.x402Exact !== spec.x402Exact) {
    await store.projects.update(project.id, { x402Exact: spec.x402Exact });
  }
  const origin = {
    name: spec.api.name,
    baseUrl: spec.api.baseUrl,
    authType: spec.api.auth?.type ?? ('none' as const),
    authName: spec.api.auth?.name ?? null,
    authSecretEnc: spec.api.auth?.secretEnc ?? null,
    authSecretLast4: spec.api.auth?.secretLast4 ?? null,
  };
  const existingApi = (await store.apis.list(project.id))[0];
  const api = existingApi
    ? await store.apis.update(project.id, existingApi.id, origin)
    : await store.apis.create({ projectId: project.id, ...origin });
  if (!api) throw new Error(`the API of ${spec.slug} vanished while publishing`);

  const existing = await store.endpoints.list(project.id);
  const endpoints: Endpoint[] = [];
  for (const e of spec.endpoints) {
    const method = e.method.toUpperCase();
    const found = existing.find((x) => x.method === method && x.path === e.path);
    endpoints.push(
      found ??
        (await store.endpoints.create({
          projectId: project.id,
          apiId: api.id,
          method,
          path: e.path,
          price: parseAmount(e.price, USDC_DECIMALS),
          description: e.description ?? `${method} ${e.path}`,
          timeoutMs: e.timeoutMs ?? 10_000,
          enabled: e.enabled ?? true,
          inputSchema: null,
          outputSchema: null,
        })),
    );
  }
  for (const rail of spec.rails) await store.rails.upsert({ projectId: project.id, ...rail });
  return { project, api, endpoints };
}
