/** docs/discovery.md documents exactly the discovery routes the app serves. */
import { describe, expect, it } from 'vitest';
import { documentedRoutes, servedRoutes } from '../support/doc-routes.ts';

describe('docs/discovery.md', () => {
  it('lists exactly the routes the gateway serves under /discovery/ and /.well-known/', async () => {
    const served = await servedRoutes(['/discovery/', '/.well-known/']);
    expect(served).toEqual(['GET /.well-known/x402', 'GET /discovery/resources']);
    expect(documentedRoutes('discovery.md')).toEqual(served);
  });
});
