/**
 * Prometheus metrics, one registry per app so tests can build several apps. Every
 * metric is listed in docs/operations.md. Labels stay bounded: route families, chains,
 * closed reason lists; the only per-project labels are the endpoint health gauge's,
 * which is why /metrics needs the operator token.
 */
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { HotCounter, HotHistogram } from './hot-metrics.ts';

export interface Metrics {
  registry: Registry;
  /** The metrics every request or paid request touches are hot-metrics.ts's (prom-client's exposition, less CPU). */
  httpRequests: HotCounter<'route' | 'method' | 'status'>;
  httpDuration: HotHistogram<'route'>;
  payments: HotCounter<'chain' | 'outcome'>;
  /** 402 responses sent, by route family. */
  paymentRequired: HotCounter<'route'>;
  /** Payments that passed every check (counted once, when first verified), by chain and wire format (v1, v2). */
  paymentsAccepted: HotCounter<'chain' | 'format'>;
  /** Every refused payment: each 402 with a reason, and invalid_payment_header; by format and reason. */
  paymentsRejected: HotCounter<'format' | 'reason'>;
  /** USDC of delivered paid requests, atomic units (the sum of the paid option's splits), by chain. */
  usdcVolume: HotCounter<'chain'>;
  upstream: HotCounter<'outcome'>;
  /** Time until an upstream answered (response headers; a stream's start), by upstream and outcome. */
  upstreamDuration: HotHistogram<'upstream' | 'outcome'>;
  /** Steps of a paid request's life (settle.ts): claim, deliver, fail, abandon, renew, lookup, by outcome. */
  settlement: HotCounter<'step' | 'outcome'>;
  endpointHealthy: Gauge<'project' | 'endpoint'>;
  /** Chain transaction lookups by chain and outcome (chains/guard.ts LookupOutcome). */
  chainLookups: HotCounter<'chain' | 'outcome'>;
  /** The x402 v2 fee payer's SOL balance, lamports (absent until first read). */
  sponsorBalance: Gauge<'chain' | 'address'>;
}

export function createMetrics(opts: { defaults?: boolean } = {}): Metrics {
  const registry = new Registry();
  // Standard names (process_*, nodejs_*), as every dashboard and alert expects them.
  if (opts.defaults !== false) collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new HotCounter({
      name: 'tollgate_http_requests_total',
      help: 'HTTP requests by route family, method and status',
      labelNames: ['route', 'method', 'status'],
      registers: [registry],
    }),
    httpDuration: new HotHistogram({
      name: 'tollgate_http_request_duration_seconds',
      help: 'HTTP request duration by route family',
      labelNames: ['route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    payments: new HotCounter({
      name: 'tollgate_payments_total',
      help: 'Payment proofs by chain and outcome (verified, rejected, pending, unavailable, replayed)',
      labelNames: ['chain', 'outcome'],
      registers: [registry],
    }),
    paymentRequired: new HotCounter({
      name: 'tollgate_payment_required_total',
      help: '402 Payment Required responses by route family',
      labelNames: ['route'],
      registers: [registry],
    }),
    paymentsAccepted: new HotCounter({
      name: 'tollgate_payments_accepted_total',
      help: 'Payments that passed every check, counted once when first verified, by chain and format (v1: X-PAYMENT, v2: PAYMENT-SIGNATURE)',
      labelNames: ['chain', 'format'],
      registers: [registry],
    }),
    paymentsRejected: new HotCounter({
      name: 'tollgate_payments_rejected_total',
      help: 'Refused payments by format and reason: every 402 that carries a reason, and invalid_payment_header',
      labelNames: ['format', 'reason'],
      registers: [registry],
    }),
    usdcVolume: new HotCounter({
      name: 'tollgate_usdc_volume_atomic_total',
      help: 'USDC paid for delivered requests, in atomic units (1 USDC = 1000000), by chain',
      labelNames: ['chain'],
      registers: [registry],
    }),
    upstream: new HotCounter({
      name: 'tollgate_upstream_requests_total',
      help: 'Forwarded requests by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    upstreamDuration: new HotHistogram({
      name: 'tollgate_upstream_duration_seconds',
      help: 'Time until an upstream answered (its response headers; the start of a stream), by upstream (marketplace, chat, embeddings) and outcome',
      labelNames: ['upstream', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers: [registry],
    }),
    settlement: new HotCounter({
      name: 'tollgate_settlement_steps_total',
      help: 'Steps of paid requests by step (claim, deliver, fail, abandon, renew, lookup) and outcome (ok, a failure reason, lease_lost, db_error)',
      labelNames: ['step', 'outcome'],
      registers: [registry],
    }),
    endpointHealthy: new Gauge({
      name: 'tollgate_endpoint_healthy',
      help: '1 when the endpoint is healthy, 0 when not',
      labelNames: ['project', 'endpoint'],
      registers: [registry],
    }),
    sponsorBalance: new Gauge({
      name: 'tollgate_sponsor_balance_lamports',
      help: 'SOL balance of the x402 v2 fee payer (sponsor), lamports',
      labelNames: ['chain', 'address'],
      registers: [registry],
    }),
    chainLookups: new HotCounter({
      name: 'tollgate_chain_lookups_total',
      help: 'Chain transaction lookups by chain and outcome: rpc (asked the node), coalesced (joined the same id in flight), negative_cache_hit (the chain did not know the id moments ago), over_capacity (refused: too many in flight), malformed (not a transaction id)',
      labelNames: ['chain', 'outcome'],
      registers: [registry],
    }),
  };
}

/** A reason as a label value: snake_case and short, anything else is `other` (labels stay bounded). */
export function reasonLabel(reason: string): string {
  return REASON.test(reason) ? reason : 'other';
}
const REASON = /^[a-z][a-z0-9_]{0,95}$/;
