/** docs/inference.md documents exactly the inference and conversation routes the app serves. */
import { describe, expect, it } from 'vitest';
import { documentedRoutes, servedRoutes } from '../support/doc-routes.ts';

describe('docs/inference.md', () => {
  it('lists exactly the routes the gateway serves for inference and conversations', async () => {
    const served = await servedRoutes([
      '/v1/models',
      '/v1/pricing',
      '/v1/chat',
      '/v1/embeddings',
      '/v1/conversations',
    ]);
    expect(served.length).toBeGreaterThan(10);
    expect(documentedRoutes('inference.md')).toEqual(served);
  });
});
