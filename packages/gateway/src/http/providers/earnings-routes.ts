/**
 * `/v1/projects/:slug/earnings` and `/v1/projects/:slug/payments` (docs/provider-api.md):
 * what a project earned and which payments arrived, for its owner or the operator. A
 * foreign project answers 404 like a missing one (providers/access.ts).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.ts';
import { resolveRange } from '../../payments/payment-query.ts';
import { csvHeader, csvLine, providerPaymentView } from '../../payments/payment-views.ts';
import { loadProject } from '../../providers/access.ts';
import { earningsReport } from '../../providers/earnings.ts';
import type { EarningsGroup } from '../../store/store.ts';
import { type ListingQuery, type PaymentListing, paymentListing } from '../payment-listing.ts';
import {
  earningsQuery,
  earningsResponse,
  projectPaymentsQuery,
  projectPaymentsResponse,
} from '../payment-schemas.ts';
import { principalOf } from './principal.ts';

type Params = { slug: string };
const params = {
  type: 'object',
  properties: { slug: { type: 'string', maxLength: 200 } },
  required: ['slug'],
};

function wantsCsv(request: FastifyRequest<{ Querystring: { format?: 'json' | 'csv' } }>): boolean {
  const { format } = request.query;
  if (format) return format === 'csv';
  const accept = request.headers.accept ?? '';
  return /\btext\/csv\b/i.test(accept) && !/\bapplication\/json\b/i.test(accept);
}

/** Every payment of the listing as CSV lines, read in batches while the client downloads. */
function csvStream(listing: PaymentListing, name: string, projectId: string, q: ListingQuery, deps: Deps) {
  async function* lines() {
    yield csvHeader();
    try {
      for await (const { record, clock } of listing.all(name, { projectId }, q)) {
        yield csvLine(providerPaymentView(record, clock));
      }
    } catch (err) {
      // Headers are gone: the download ends short and the client sees a broken transfer.
      deps.log.error({ err, project: projectId }, 'payments CSV export failed');
      throw err;
    }
  }
  return Readable.from(lines());
}

export function earningsRoutes(scope: FastifyInstance, deps: Deps): void {
  const listing = paymentListing(deps);

  scope.get<{ Params: Params; Querystring: { from?: string; to?: string; groupBy: EarningsGroup } }>(
    '/v1/projects/:slug/earnings',
    {
      schema: {
        tags: ['earnings'],
        summary: "A project's earnings per chain, grouped by UTC day, endpoint or chain",
        params,
        querystring: earningsQuery,
        response: { 200: earningsResponse },
      },
    },
    async (request) => {
      const project = await loadProject(deps, principalOf(request), request.params.slug);
      const range = resolveRange(request.query, deps.now());
      return earningsReport(deps.store.paymentReads, project, range, request.query.groupBy);
    },
  );

  scope.get<{ Params: Params; Querystring: ListingQuery & { format?: 'json' | 'csv' } }>(
    '/v1/projects/:slug/payments',
    {
      schema: {
        tags: ['earnings'],
        summary: "A project's payments, newest first (JSON pages, or every page as CSV)",
        params,
        querystring: projectPaymentsQuery,
        response: { 200: projectPaymentsResponse },
      },
    },
    async (request, reply) => {
      const project = await loadProject(deps, principalOf(request), request.params.slug);
      const name = `project:${project.id}`;
      const { format: _format, ...q } = request.query;
      if (wantsCsv(request)) {
        // Parse the range and cursor before the 200 goes out, so bad input is still a clean 400.
        listing.check(name, q);
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${project.slug}-payments.csv"`)
          .send(csvStream(listing, name, project.id, q, deps));
      }
      const { records, clock, nextCursor } = await listing.page(name, { projectId: project.id }, q);
      return { payments: records.map((r) => providerPaymentView(r, clock)), nextCursor };
    },
  );
}
