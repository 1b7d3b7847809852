/**
 * `GET /v1/payments` (docs/provider-api.md, "Undelivered payments"): every project's
 * payments for the operator, with the same filters as a project's list; the operator's
 * way to find undelivered payments to refund. The admin token only.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { operatorPaymentView } from '../payments/payment-views.ts';
import { authenticate } from './authenticate.ts';
import { type ListingQuery, paymentListing } from './payment-listing.ts';
import { operatorPaymentsQuery, operatorPaymentsResponse } from './payment-schemas.ts';
import { useStrictValidation } from './providers/strict-schema.ts';

export function operatorPaymentRoutes(app: FastifyInstance, deps: Deps): void {
  const listing = paymentListing(deps);

  app.register(async (scope) => {
    useStrictValidation(scope);
    scope.addHook('onSend', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
    });

    scope.get<{ Querystring: ListingQuery }>(
      '/v1/payments',
      {
        onRequest: async (request) => {
          const who = await authenticate(request, deps);
          if (who.kind !== 'operator') {
            throw new ApiError('forbidden', 'only the operator may list every payment', {
              reason: 'operator_only',
            });
          }
        },
        schema: {
          tags: ['payments'],
          summary: 'Every payment of every project, newest first (operator)',
          querystring: operatorPaymentsQuery,
          response: { 200: operatorPaymentsResponse },
        },
      },
      async (request) => {
        const { records, clock, nextCursor } = await listing.page('all', { all: true }, request.query);
        return { payments: records.map((r) => operatorPaymentView(r, clock)), nextCursor };
      },
    );
  });
}
