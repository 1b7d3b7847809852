/**
 * One page of payments for the three listings (a project's, a payer's, the operator's):
 * the range and cursor from the query string, newest first, and the signed cursor of the
 * next page. Also every page of a range at once, for the CSV export.
 */
import type { Deps } from '../deps.ts';
import { type Cursors, createCursors, type PageCursor, resolveRange } from '../payments/payment-query.ts';
import type { StatusClock } from '../payments/payment-views.ts';
import type { PaymentRecord, PaymentScope, PaymentStatusFilter } from '../store/store.ts';

export interface ListingQuery {
  from?: string;
  to?: string;
  cursor?: string;
  limit: number;
  status?: PaymentStatusFilter;
}

/** Rows per statement when the CSV export reads every page. */
const EXPORT_BATCH = 500;

export function paymentListing(deps: Deps) {
  if (!deps.config.secret) throw new Error('config.secret is required to sign page cursors');
  const cursors: Cursors = createCursors(deps.config.secret, deps.config.previousSecret);
  const undeliveredAfterMs = deps.config.undeliveredAfterSec * 1000;

  /** Names the listing and its filters as given, so a cursor works only where it came from. */
  const listingOf = (name: string, q: ListingQuery) =>
    JSON.stringify([name, q.status ?? '', q.from ?? '', q.to ?? '']);

  function start(
    name: string,
    q: ListingQuery,
    nowMs: number,
  ): Omit<PageCursor, 'after'> & Partial<PageCursor> {
    if (q.cursor) return cursors.decode(listingOf(name, q), q.cursor);
    return { range: resolveRange(q, nowMs) };
  }

  /** Up to `limit` rows of the listing newest first, after `after` when given. */
  function read(
    scope: PaymentScope,
    q: ListingQuery,
    at: { range: PageCursor['range']; after?: PageCursor['after'] | undefined; nowMs: number },
    limit: number,
  ): Promise<PaymentRecord[]> {
    return deps.store.paymentReads.list({
      scope,
      ...at.range,
      ...(q.status ? { status: q.status } : {}),
      nowMs: at.nowMs,
      undeliveredAfterMs,
      ...(at.after ? { after: at.after } : {}),
      limit,
    });
  }

  return {
    /** Checks the range and cursor of a query (400 on bad ones) without reading anything. */
    check(name: string, q: ListingQuery): void {
      start(name, q, deps.now());
    },

    /**
     * One page. `name` identifies the listing (e.g. `project:<id>`), `scope` selects its rows.
     * Returns the records, the clock their statuses are computed at, and the next cursor.
     */
    async page(name: string, scope: PaymentScope, q: ListingQuery) {
      const nowMs = deps.now();
      const { range, after } = start(name, q, nowMs);
      // One more than asked tells whether a next page exists.
      const records = await read(scope, q, { range, after, nowMs }, q.limit + 1);
      const rows = records.slice(0, q.limit);
      const last = rows.at(-1);
      const nextCursor =
        records.length > q.limit && last
          ? cursors.encode(listingOf(name, q), {
              after: { createdAtMs: last.createdAtMs, id: last.id },
              range,
            })
          : null;
      const clock: StatusClock = { nowMs, undeliveredAfterMs };
      return { records: rows, clock, nextCursor };
    },

    /** Every payment of the range (from the cursor on, if given), in batches, newest first. */
    async *all(
      name: string,
      scope: PaymentScope,
      q: ListingQuery,
    ): AsyncGenerator<{ record: PaymentRecord; clock: StatusClock }> {
      const nowMs = deps.now();
      const clock: StatusClock = { nowMs, undeliveredAfterMs };
      const first = start(name, q, nowMs);
      const { range } = first;
      let { after } = first;
      for (;;) {
        const batch = await read(scope, q, { range, after, nowMs }, EXPORT_BATCH);
        for (const record of batch) yield { record, clock };
        const last = batch.at(-1);
        if (batch.length < EXPORT_BATCH || !last) return;
        after = { createdAtMs: last.createdAtMs, id: last.id };
      }
    },
  };
}

export type PaymentListing = ReturnType<typeof paymentListing>;
