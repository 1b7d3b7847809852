/** docs/provider-api.md documents exactly the sign-in, provider and directory routes the app serves. */
import { describe, expect, it } from 'vitest';
import { documentedRoutes, servedRoutes } from '../support/doc-routes.ts';

describe('docs/provider-api.md', () => {
  it('lists exactly the routes the gateway serves under /v1/auth, /v1/projects, /v1/directory, /v1/me and /v1/payments', async () => {
    const served = await servedRoutes([
      '/v1/auth/',
      '/v1/projects',
      '/v1/directory/',
      '/v1/me/',
      '/v1/payments',
    ]);
    expect(served.length).toBeGreaterThan(15);
    expect(documentedRoutes('provider-api.md')).toEqual(served);
  });
});
