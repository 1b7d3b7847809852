/**
 * A project's earnings (docs/provider-api.md, "Earnings"): delivered and replayed payments
 * in a time range, per chain, as exact decimal USDC. gross is what payers paid, fee the
 * platform's part, net = gross - fee the provider's share. Rows per (key, chain) sum to
 * the totals of their chain exactly (the store sums atomic units).
 */

import type { TimeRange } from '../payments/payment-query.ts';
import { UNIT, usdc } from '../payments/payment-views.ts';
import type { EarningsFigures, EarningsGroup, PaymentReadRepo, Project } from '../store/store.ts';

function money(f: EarningsFigures) {
  return {
    chain: f.chain,
    requests: f.requests,
    gross: usdc(f.gross),
    fee: usdc(f.fee),
    net: usdc(f.gross - f.fee),
  };
}

export async function earningsReport(
  reads: PaymentReadRepo,
  project: Project,
  range: TimeRange,
  groupBy: EarningsGroup,
) {
  const { totals, rows } = await reads.earnings({ projectId: project.id, ...range, groupBy });
  // groupBy=endpoint names each endpoint (one query); a deleted one shows as null.
  const labels =
    groupBy === 'endpoint'
      ? new Map((await reads.endpointLabels(rows.map((r) => r.key).filter(Boolean))).map((e) => [e.id, e]))
      : null;
  return {
    project: project.slug,
    unit: UNIT,
    from: new Date(range.fromMs).toISOString(),
    to: new Date(range.toMs).toISOString(),
    groupBy,
    totals: totals.map(money),
    rows: rows.map((r) => ({
      key: r.key,
      ...(labels ? { endpoint: labels.get(r.key) ?? null } : {}),
      ...money(r),
    })),
  };
}
