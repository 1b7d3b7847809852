/**
 * Read models over redemptions (issue 13): a project's earnings and the payment lists of
 * a project, a payer and the operator. Read only; the money path (settle.ts) writes.
 *
 * Sums are exact on both backends: amounts are cast to 64-bit integers, summed (SQLite
 * exactly, PostgreSQL into NUMERIC) and read back as text, as in payable-repo.ts. Days are
 * bucketed from `created_at_ms` by integer division, so SQLite and PostgreSQL agree to the
 * millisecond (no time zone, no date functions that differ between them).
 */
import { type ExpressionBuilder, sql } from 'kysely';
import type {
  Chain,
  EarningsFigures,
  EarningsRow,
  PaymentListQuery,
  PaymentReadRepo,
  PaymentRecord,
  PaymentStatusFilter,
} from '../store.ts';
import type { Backend } from './backend.ts';
import { pageSize, toNum } from './rows.ts';
import type { Database } from './schema.ts';

const DAY_MS = 86_400_000;
/** Ids per statement, well under both databases' bound-parameter limits. */
const CHUNK = 500;

const gross = sql<string>`cast(sum(cast(r.amount as bigint)) as text)`;
const fee = sql<string>`cast(sum(cast(r.fee as bigint)) as text)`;
/** Days since the epoch (UTC): created_at_ms is a non-negative integer on both backends. */
const dayOf = sql<number | string>`r.created_at_ms / ${sql.lit(DAY_MS)}`;

type R = ExpressionBuilder<Database & { r: Database['redemptions'] }, 'r'>;

/** The SQL form of one status, the same partition as paymentStatus() in payments/payment-status.ts. */
function statusWhere(eb: R, status: PaymentStatusFilter, cutoffMs: number) {
  const notDelivered = eb('r.state', '!=', 'delivered');
  switch (status) {
    case 'delivered':
      return eb.and([eb('r.state', '=', 'delivered'), eb('r.replays', '=', 0)]);
    case 'replayed':
      return eb.and([eb('r.state', '=', 'delivered'), eb('r.replays', '>', 0)]);
    case 'refunded':
      return eb.and([notDelivered, eb('r.refund_state', '=', 'refunded')]);
    case 'refunding':
      return eb.and([
        notDelivered,
        eb('r.refund_state', 'is not', null),
        eb('r.refund_state', '!=', 'refunded'),
      ]);
    case 'undelivered':
      return eb.and([notDelivered, eb('r.refund_state', 'is', null), eb('r.created_at_ms', '<=', cutoffMs)]);
    case 'retryable':
      return eb.and([notDelivered, eb('r.refund_state', 'is', null), eb('r.created_at_ms', '>', cutoffMs)]);
  }
}

function isoDay(days: number): string {
  return new Date(days * DAY_MS).toISOString().slice(0, 10);
}

function figures(r: {
  chain: string;
  n: unknown;
  gross: string | null;
  fee: string | null;
}): EarningsFigures {
  return {
    chain: r.chain as Chain,
    requests: toNum(r.n as number | string | bigint),
    gross: BigInt(r.gross ?? '0'),
    fee: BigInt(r.fee ?? '0'),
  };
}

function parseMeta(text: string): { subject: string | null; x402Version: 1 | 2 } {
  try {
    const m = JSON.parse(text) as { subject?: unknown; x402Version?: unknown };
    return {
      subject: typeof m.subject === 'string' ? m.subject : null,
      x402Version: m.x402Version === 2 ? 2 : 1,
    };
  } catch {
    return { subject: null, x402Version: 1 };
  }
}

export function paymentReadRepo(backend: Backend): PaymentReadRepo {
  const { db } = backend;

  /** Delivered payments of a project in a range, as `r`. */
  function delivered(q: { projectId: string; fromMs: number; toMs: number }) {
    return db
      .selectFrom('redemptions as r')
      .where('r.project_id', '=', q.projectId)
      .where('r.state', '=', 'delivered')
      .where('r.created_at_ms', '>=', q.fromMs)
      .where('r.created_at_ms', '<', q.toMs);
  }

  return {
    async earnings(q) {
      const totals = await delivered(q)
        .select((eb) => ['r.chain as chain', eb.fn.countAll().as('n'), gross.as('gross'), fee.as('fee')])
        .groupBy('r.chain')
        .orderBy('r.chain')
        .execute();

      let rows: EarningsRow[];
      if (q.groupBy === 'day') {
        const out = await delivered(q)
          .select((eb) => [
            dayOf.as('day'),
            'r.chain as chain',
            eb.fn.countAll().as('n'),
            gross.as('gross'),
            fee.as('fee'),
          ])
          .groupBy([dayOf, 'r.chain'])
          .orderBy(dayOf)
          .orderBy('r.chain')
          .execute();
        rows = out.map((r) => ({ key: isoDay(toNum(r.day)), ...figures(r) }));
      } else if (q.groupBy === 'endpoint') {
        const out = await delivered(q)
          .select((eb) => [
            'r.endpoint_id as endpoint',
            'r.chain as chain',
            eb.fn.countAll().as('n'),
            gross.as('gross'),
            fee.as('fee'),
          ])
          .groupBy(['r.endpoint_id', 'r.chain'])
          .orderBy('r.endpoint_id')
          .orderBy('r.chain')
          .execute();
        rows = out.map((r) => ({ key: r.endpoint ?? '', ...figures(r) }));
      } else {
        rows = totals.map((r) => ({ key: r.chain, ...figures(r) }));
      }
      return { totals: totals.map(figures), rows };
    },

    async list(q: PaymentListQuery) {
      const { scope, status, after } = q;
      const cutoff = q.nowMs - q.undeliveredAfterMs;
      const query = db
        .selectFrom('redemptions as r')
        .leftJoin('endpoints as e', 'e.id', 'r.endpoint_id')
        .leftJoin('projects as p', 'p.id', 'r.project_id')
        .select([
          'r.id',
          'r.chain',
          'r.network',
          'r.tx_id',
          'r.payer',
          'r.requirement_id',
          'r.state',
          'r.project_id',
          'r.endpoint_id',
          'r.amount',
          'r.fee',
          'r.replays',
          'r.refund_state',
          'r.created_at_ms',
          'r.delivered_at_ms',
          'r.meta',
          'e.method as e_method',
          'e.path as e_path',
          'p.slug as p_slug',
        ])
        .where((eb) => {
          // The joined tables add columns, never change r's: one helper serves this builder too.
          const r = eb as unknown as R;
          const all = [r('r.created_at_ms', '>=', q.fromMs), r('r.created_at_ms', '<', q.toMs)];
          if ('projectId' in scope) all.push(r('r.project_id', '=', scope.projectId));
          else if ('payer' in scope) {
            all.push(r('r.payer', '=', scope.payer.address), r('r.chain', '=', scope.payer.chain));
          }
          if (status) all.push(statusWhere(r, status, cutoff));
          if (after) {
            all.push(
              r.or([
                r('r.created_at_ms', '<', after.createdAtMs),
                r.and([r('r.created_at_ms', '=', after.createdAtMs), r('r.id', '<', after.id)]),
              ]),
            );
          }
          return r.and(all);
        });
      const rows = (await query
        .orderBy('r.created_at_ms', 'desc')
        .orderBy('r.id', 'desc')
        .limit(pageSize(q.limit, 1000))
        .execute()) as ListRow[];
      return rows.map(toRecord);
    },

    async endpointLabels(ids) {
      const out: { id: string; method: string; path: string }[] = [];
      const unique = [...new Set(ids)];
      for (let i = 0; i < unique.length; i += CHUNK) {
        const part = unique.slice(i, i + CHUNK);
        out.push(
          ...(await db
            .selectFrom('endpoints')
            .select(['id', 'method', 'path'])
            .where('id', 'in', part)
            .execute()),
        );
      }
      return out;
    },
  };
}

interface ListRow {
  id: string;
  chain: string;
  network: string;
  tx_id: string;
  payer: string;
  requirement_id: string;
  state: string;
  project_id: string | null;
  endpoint_id: string | null;
  amount: string | number | null;
  fee: string | number | null;
  replays: number;
  refund_state: string | null;
  created_at_ms: number | string;
  delivered_at_ms: number | string | null;
  meta: string;
  e_method: string | null;
  e_path: string | null;
  p_slug: string | null;
}

function toRecord(r: ListRow): PaymentRecord {
  return {
    id: r.id,
    chain: r.chain as Chain,
    network: r.network,
    txId: r.tx_id,
    payer: r.payer,
    requirementId: r.requirement_id,
    state: r.state as PaymentRecord['state'],
    projectId: r.project_id,
    projectSlug: r.p_slug,
    endpointId: r.endpoint_id,
    endpoint:
      r.endpoint_id !== null && r.e_method !== null && r.e_path !== null
        ? { id: r.endpoint_id, method: r.e_method, path: r.e_path }
        : null,
    ...parseMeta(r.meta),
    amount: BigInt(r.amount ?? 0),
    fee: BigInt(r.fee ?? 0),
    replays: r.replays,
    refundState: r.refund_state,
    createdAtMs: toNum(r.created_at_ms),
    deliveredAtMs: r.delivered_at_ms === null ? null : toNum(r.delivered_at_ms),
  };
}
