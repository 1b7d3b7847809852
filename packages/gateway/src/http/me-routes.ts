/**
 * `GET /v1/me/payments` (docs/provider-api.md, "Payer history"): a signed-in wallet's own
 * payments, newest first, each with the x402 receipt its answer carried. Only payments
 * whose payer is the session's address on the session's chain; the operator token has no
 * wallet and is refused.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { payerPaymentView } from '../payments/payment-views.ts';
import type { Owner, PaymentRecord } from '../store/store.ts';
import { authenticate } from './authenticate.ts';
import { type ListingQuery, paymentListing } from './payment-listing.ts';
import { payerPaymentsQuery, payerPaymentsResponse } from './payment-schemas.ts';
import { useStrictValidation } from './providers/strict-schema.ts';

/** The session's wallet, set by the route's onRequest hook. */
const owners = new WeakMap<FastifyRequest, Owner>();

export function meRoutes(app: FastifyInstance, deps: Deps): void {
  const listing = paymentListing(deps);
  // A v2 receipt names its network by CAIP-2, as the v2 scheme configured for the chain does.
  const caip2 = (p: PaymentRecord) => deps.v2Schemes?.[p.chain]?.caip2 ?? p.network;

  app.register(async (scope) => {
    useStrictValidation(scope);
    scope.addHook('onSend', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
    });

    scope.get<{ Querystring: Omit<ListingQuery, 'status'> }>(
      '/v1/me/payments',
      {
        // Who is asking comes first: an anonymous caller learns nothing about query validation.
        onRequest: async (request) => {
          const who = await authenticate(request, deps);
          if (who.kind !== 'owner') {
            throw new ApiError(
              'forbidden',
              'payment history belongs to a signed-in wallet; the operator token has none',
              {
                reason: 'operator_token',
              },
            );
          }
          owners.set(request, who.owner);
        },
        schema: {
          tags: ['payments'],
          summary: "The signed-in wallet's own payments, newest first, with their x402 receipts",
          querystring: payerPaymentsQuery,
          response: { 200: payerPaymentsResponse },
        },
      },
      async (request) => {
        const owner = owners.get(request)!;
        const name = `payer:${owner.chain}:${owner.address}`;
        const { records, clock, nextCursor } = await listing.page(name, { payer: owner }, request.query);
        return { payments: records.map((r) => payerPaymentView(r, clock, caip2)), nextCursor };
      },
    );
  });
}
