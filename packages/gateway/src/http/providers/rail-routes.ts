/**
 * `/v1/projects/:slug/rails[/:chain]`: where a project gets paid. The provider
 * chooses only its own recipient; network, platform recipient and USDC asset
 * come from the operator's config.
 */
import type { FastifyInstance } from 'fastify';
import { normalizeAddress } from '../../auth/addresses.ts';
import type { Deps } from '../../deps.ts';
import { ApiError } from '../../errors.ts';
import { loadProject } from '../../providers/access.ts';
import { invalid } from '../../providers/rules.ts';
import { railParams, railPutBody } from '../../providers/schemas.ts';
import { platformRecipient, railView } from '../../providers/views.ts';
import type { Chain } from '../../store/store.ts';
import { principalOf } from './principal.ts';

type Params = { slug: string; chain: Chain };

export function railRoutes(scope: FastifyInstance, deps: Deps): void {
  scope.put<{ Params: Params; Body: { network: string; providerRecipient: string } }>(
    '/v1/projects/:slug/rails/:chain',
    { schema: { params: railParams, body: railPutBody } },
    async (request) => {
      const project = await loadProject(deps, principalOf(request), request.params.slug);
      const { chain } = request.params;
      const { network } = request.body;
      if (network !== deps.config.chainNetwork) {
        throw invalid(`network must be "${deps.config.chainNetwork}" on this gateway`, 'unsupported_network');
      }
      if (!platformRecipient(deps.config, chain)) {
        throw invalid(`this gateway does not accept payments on ${chain}`, 'chain_not_configured');
      }
      const providerRecipient = normalizeAddress(chain, request.body.providerRecipient);
      if (!providerRecipient) {
        throw invalid(
          chain === 'sui'
            ? 'providerRecipient must be a Sui address: 0x followed by 64 hex digits'
            : 'providerRecipient must be a base58 32-byte Solana address',
          'invalid_recipient',
        );
      }
      const rail = await deps.store.rails.upsert({
        projectId: project.id,
        chain,
        network,
        providerRecipient,
      });
      deps.catalog.invalidate(project.slug);
      request.log.info({ slug: project.slug, chain, providerRecipient }, 'rail set');
      return railView(deps.config, rail);
    },
  );

  scope.get<{ Params: { slug: string } }>('/v1/projects/:slug/rails', async (request) => {
    const project = await loadProject(deps, principalOf(request), request.params.slug);
    return { rails: (await deps.store.rails.list(project.id)).map((r) => railView(deps.config, r)) };
  });

  scope.delete<{ Params: Params }>(
    '/v1/projects/:slug/rails/:chain',
    { schema: { params: railParams } },
    async (request, reply) => {
      const project = await loadProject(deps, principalOf(request), request.params.slug);
      if (!(await deps.store.rails.delete(project.id, request.params.chain))) {
        throw new ApiError('not_found', `no ${request.params.chain} rail in this project`, {
          reason: 'rail_not_found',
        });
      }
      deps.catalog.invalidate(project.slug);
      return reply.code(204).send();
    },
  );
}
