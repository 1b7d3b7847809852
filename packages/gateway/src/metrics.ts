/** Prometheus metrics, one registry per app so tests can build several apps. */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'route' | 'method' | 'status'>;
  httpDuration: Histogram<'route'>;
  payments: Counter<'chain' | 'outcome'>;
  upstream: Counter<'outcome'>;
  /** Steps of a paid request's life (settle.ts): claim, deliver, fail, abandon, renew, lookup, by outcome. */
  settlement: Counter<'step' | 'outcome'>;
  endpointHealthy: Gauge<'project' | 'endpoint'>;
  /** Chain transaction lookups by chain and outcome (chains/guard.ts LookupOutcome). */
  chainLookups: Counter<'chain' | 'outcome'>;
  /** The x402 v2 fee payer's SOL balance, lamports (absent until first read). */
  sponsorBalance: Gauge<'chain' | 'address'>;
}

export function createMetrics(opts: { defaults?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (opts.defaults !== false) collectDefaultMetrics({ register: registry, prefix: 'tollgate_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'tollgate_http_requests_total',
      help: 'HTTP requests by route family, method and status',
      labelNames: ['route', 'method', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'tollgate_http_request_duration_seconds',
      help: 'HTTP request duration by route family',
      labelNames: ['route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    payments: new Counter({
      name: 'tollgate_payments_total',
      help: 'Payment proofs by chain and outcome (verified, rejected, pending, unavailable, replayed)',
      labelNames: ['chain', 'outcome'],
      registers: [registry],
    }),
    upstream: new Counter({
      name: 'tollgate_upstream_requests_total',
      help: 'Forwarded requests by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    settlement: new Counter({
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
    chainLookups: new Counter({
      name: 'tollgate_chain_lookups_total',
      help: 'Chain transaction lookups by chain and outcome: rpc (asked the node), coalesced (joined the same id in flight), negative_cache_hit (the chain did not know the id moments ago), over_capacity (refused: too many in flight), malformed (not a transaction id)',
      labelNames: ['chain', 'outcome'],
      registers: [registry],
    }),
  };
}
