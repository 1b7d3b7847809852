/**
 * ANY /p/:projectSlug/* — the paid proxy. Order: vet the path (invalid_path), then
 * settlement: a proof bound to this request first (replay, or a paid attempt unless the
 * endpoint was switched off or removed); anything else gets endpoint_not_found,
 * endpoint_unavailable (never a 402) or the 402. Then forward and deliver.
 */
import { EMPTY_BODY_SHA256, sha256Hex } from '@tollgate/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import type { ErrorCode } from '../errors.ts';
import { type CatalogEntry, endpointKey } from '../marketplace/catalog.ts';
import { type PathCheck, splitMarketplaceTarget } from '../marketplace/paths.ts';
import { marketplaceQuote } from '../marketplace/quote.ts';
import { bazaarExtensions } from '../payments/bazaar.ts';
import type { Quote, RequestFacts } from '../payments/requirement.ts';
import {
  type AdmitInput,
  isDeliverable,
  type PaidRequest,
  type Refusal,
  type RetryTerms,
} from '../payments/settle.ts';
import { paymentContextHeaders } from '../providers/payment-context.ts';
import { type ForwardRequest, readCapped } from '../proxy/forward.ts';
import type { OriginAuth } from '../proxy/forward-headers.ts';
import { CLIENT_ABORTED_CODE, type UpstreamFailure } from '../proxy/upstream-error.ts';
import type { Api, Endpoint } from '../store/store.ts';
import { type AccessLog, accessLogFor } from './access-log.ts';
import { sendError } from './error-handling.ts';
import { flattenHeaders, streamAndSettle } from './marketplace-deliver.ts';
import { answerAdmission, sendRetryable } from './respond.ts';

export const MARKETPLACE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
/** The route patterns (the access log's route family comes from them). */
export const MARKETPLACE_ROUTES = ['/p/:projectSlug', '/p/:projectSlug/*'] as const;

/** The scheme callers use to reach us (TLS usually ends in front of the gateway). */
export function forwardedProtoOf(deps: Deps): string {
  return new URL(deps.config.publicBaseUrl).protocol.replace(':', '');
}

export function marketplaceRoutes(app: FastifyInstance, deps: Deps): void {
  const forwardedProto = forwardedProtoOf(deps);
  const handler = (req: FastifyRequest, reply: FastifyReply) => handle(req, reply, deps, forwardedProto);
  app.register(async (scope) => {
    // Raw bytes for every content type: the bytes hashed are the bytes forwarded.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    for (const url of MARKETPLACE_ROUTES) scope.route({ method: [...MARKETPLACE_METHODS], url, handler });
  });
}

/** A /p target that passed splitMarketplaceTarget. */
export type MarketplaceTarget = Extract<PathCheck, { ok: true }>;

const unavailable = (reason: string, message = 'this endpoint is currently unavailable'): Refusal => ({
  code: 'endpoint_unavailable',
  message,
  extra: { reason },
  headers: { 'retry-after': '30' },
});

async function handle(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  forwardedProto: string,
): Promise<FastifyReply> {
  const target = splitMarketplaceTarget(request.url);
  if (!target.ok)
    return sendError(reply, 'invalid_path', 'the path is not allowed', { reason: target.reason });

  const entry = await deps.catalog.get(target.slug);
  const body = Buffer.isBuffer(request.body) && request.body.length > 0 ? request.body : null;
  const { input, endpoint, api } = marketplaceAdmitInput(
    deps,
    request.method,
    target,
    entry,
    accessLogFor(request),
    body ? sha256Hex(body) : EMPTY_BODY_SHA256,
  );
  input.header = firstHeader(request.headers['x-payment']);
  input.v2Header = firstHeader(request.headers['payment-signature']);
  const admission = await deps.settlement.admit(input);
  const answered = answerAdmission(reply, admission);
  if (answered) return answered;
  const paid = admission.kind === 'paid' ? admission.paid : null;
  if (!endpoint || !api || !entry) {
    // quote() and servePaid() refuse these cases before anything is admitted: a bug if reached.
    await paid?.abandon('gateway_error');
    throw new Error('a marketplace request was admitted without an endpoint and origin');
  }
  return deps.settlement.serve(paid, () =>
    forwardAndDeliver({
      request,
      reply,
      deps,
      forwardedProto,
      paid,
      api,
      body,
      target,
      endpoint,
      project: entry.project.slug,
    }),
  );
}

/**
 * What settlement is asked about a /p request, without its payment headers (the caller adds
 * them): the route and the fast path (fast-unpaid.ts) both ask through this. Notes the project
 * and endpoint in the access-log fields.
 */
export function marketplaceAdmitInput(
  deps: Deps,
  method: string,
  target: MarketplaceTarget,
  entry: CatalogEntry | null,
  log: AccessLog,
  bodySha256: string,
): { input: AdmitInput; endpoint: Endpoint | undefined; api: Api | undefined } {
  const endpoint = entry?.endpoints.get(endpointKey(method, target.path));
  const api = endpoint ? entry?.apis.get(endpoint.apiId) : undefined;
  if (entry) log.project = target.slug;
  if (endpoint) log.endpoint = endpoint.id;
  const input = new MarketplaceAdmitInput(deps, method, target, entry, endpoint, api, log, bodySha256);
  return { input, endpoint, api };
}

/** A /p request as settlement sees it (one object per request: its methods are not closures). */
class MarketplaceAdmitInput implements AdmitInput {
  header: string | undefined = undefined;
  v2Header: string | undefined = undefined;
  readonly facts: RequestFacts;
  readonly subject: string | null;
  readonly projectId: string | undefined;
  readonly log: AccessLog;
  private readonly deps: Deps;
  private readonly method: string;
  private readonly target: MarketplaceTarget;
  private readonly entry: CatalogEntry | null;
  private readonly endpoint: Endpoint | undefined;
  private readonly api: Api | undefined;

  constructor(
    deps: Deps,
    method: string,
    target: MarketplaceTarget,
    entry: CatalogEntry | null,
    endpoint: Endpoint | undefined,
    api: Api | undefined,
    log: AccessLog,
    bodySha256: string,
  ) {
    this.deps = deps;
    this.method = method;
    this.target = target;
    this.entry = entry;
    this.endpoint = endpoint;
    this.api = api;
    this.log = log;
    this.facts = { method, pathWithQuery: target.pathWithQuery, bodySha256 };
    this.subject = endpoint ? `ep:${endpoint.id}` : null;
    this.projectId = entry ? entry.project.id : undefined;
  }

  /** Unpaid requests: health, the switch and the rails decide whether a 402 is issued. */
  quote(): Quote | Refusal {
    const { entry, endpoint, api, target, deps } = this;
    if (!entry || !endpoint) {
      return {
        code: 'endpoint_not_found',
        message: `no endpoint ${this.method} /${target.path} in project ${target.slug}`,
      };
    }
    if (!endpoint.enabled) return unavailable('disabled');
    if (!api) return unavailable('no_origin');
    if (!deps.health.isHealthy(endpoint.id)) return unavailable('unhealthy');
    const quote = marketplaceQuote(target.slug, endpoint, entry.rails, deps.config, deps.verifiers);
    if (quote.options.length === 0 && quote.price + quote.fee > 0n) {
      return unavailable('no_payment_rail', 'this endpoint has no payment rail that can be used now');
    }
    // Stock x402 v2 clients may pay only projects that opted in (DESIGN §4.12).
    return entry.project.x402Exact ? withV2(quote) : quote;
  }

  /**
   * A paid proof gets its upstream attempt whatever health says, unless the provider
   * switched the endpoint off or removed it.
   */
  servePaid(): Refusal | null {
    const { endpoint } = this;
    return !endpoint
      ? unavailable('deleted')
      : !endpoint.enabled
        ? unavailable('disabled')
        : !this.api
          ? unavailable('no_origin')
          : null;
  }

  v2Extensions(): Record<string, unknown> | undefined {
    return this.endpoint ? bazaarExtensions(this.endpoint) : undefined;
  }
}

interface Forwarding {
  request: FastifyRequest;
  reply: FastifyReply;
  deps: Deps;
  forwardedProto: string;
  paid: PaidRequest | null;
  api: Api;
  endpoint: Endpoint;
  project: string;
  body: Buffer | null;
  target: { path: string; query: string };
}

async function forwardAndDeliver(f: Forwarding): Promise<FastifyReply> {
  const { request, reply, deps, paid, endpoint, project } = f;
  // An unpaid request stops when its client leaves. A paid one is read to its end and
  // stored whatever the client does, so one payment never runs the upstream twice.
  let abort: AbortController | null = null;
  if (!paid) {
    const controller = new AbortController();
    abort = controller;
    request.raw.once('close', () => {
      if (!reply.raw.writableFinished) controller.abort();
    });
  }
  const auth = originAuth(f.api, deps);
  const outcome = new UpstreamOutcome(deps, endpoint.id, project);
  const result = await deps.forwarder.forward({
    ...forwardRequest(f.api, auth, f.target, {
      method: request.method,
      headers: request.headers,
      body: f.body,
      timeoutMs: endpoint.timeoutMs,
      clientIp: request.ip,
      forwardedProto: f.forwardedProto,
      requestId: String(request.id),
    }),
    ...(abort ? { signal: abort.signal } : {}),
    ...(paid ? { gatewayHeaders: paymentContextFor(paid, request.method, auth, deps.now()) } : {}),
  });

  if (!result.ok) {
    const clientGone = result.detail === CLIENT_ABORTED_CODE || abort?.signal.aborted === true;
    const { code, message } = outcome.failed(result.error, clientGone);
    if (!paid) {
      if (!clientGone) outcome.healthFailure(null);
      return sendError(reply, code, message, { retryable: false, reason: result.error });
    }
    const terms = await paid.fail(result.detail);
    outcome.healthFailure(terms);
    return sendRetryable(reply, code, message, terms, { reason: result.error });
  }

  if (paid && !isDeliverable(result.status)) {
    outcome.refused(result.status);
    // Drain (bounded) so the pooled connection can be reused, then give the payment back.
    await readCapped(result.body, 64 * 1024).catch(() => undefined);
    const terms = await paid.fail(`status_${result.status}`);
    outcome.healthFailure(terms);
    return sendRetryable(reply, 'upstream_error', `the upstream answered ${result.status}`, terms, {
      upstreamStatus: result.status,
    });
  }

  // Requests that needed no payment get the upstream's answer as it is, 5xx included.
  outcome.answered(result.status);
  return streamAndSettle(
    reply,
    result.status,
    flattenHeaders(result.headers),
    result.body,
    paid,
    deps.config.maxResponseBytes,
    (s) => {
      if (!s.delivered) outcome.cut(s.terms);
    },
  );
}

/** The ForwardRequest of a /p request to `api` (the route and the fast path, fast-unpaid.ts). */
export function forwardRequest(
  api: Api,
  auth: OriginAuth,
  target: { path: string; query: string },
  r: {
    method: string;
    headers: ForwardRequest['headers'];
    body: Buffer | null;
    timeoutMs: number;
    clientIp: string;
    forwardedProto: string;
    requestId: string;
  },
): ForwardRequest {
  return {
    baseUrl: api.baseUrl,
    path: target.path,
    query: target.query,
    method: r.method,
    headers: r.headers,
    body: r.body,
    auth,
    timeoutMs: r.timeoutMs,
    clientIp: r.clientIp,
    forwardedProto: r.forwardedProto,
    forwardedHost: String(r.headers['host'] ?? ''),
    requestId: r.requestId,
  };
}

/**
 * Counts one upstream exchange of endpoint `endpointId` (metrics) and tells the
 * endpoint's health about it; started when made. The route and the fast path use it.
 * A class, not closures: one object per forwarded request instead of eight functions.
 */
export class UpstreamOutcome {
  private readonly started = performance.now();
  private readonly deps: Pick<Deps, 'metrics' | 'health'>;
  private readonly endpointId: string;
  private readonly project: string;
  constructor(deps: Pick<Deps, 'metrics' | 'health'>, endpointId: string, project: string) {
    this.deps = deps;
    this.endpointId = endpointId;
    this.project = project;
  }

  private count(outcome: string): void {
    this.deps.metrics.upstream.inc({ outcome });
    this.deps.metrics.upstreamDuration.observe(
      { upstream: 'marketplace', outcome },
      (performance.now() - this.started) / 1000,
    );
  }

  /** One proof's failures count once; a caller that hung up says nothing about the upstream. */
  healthFailure(terms: RetryTerms | null): void {
    if (!terms || terms.countsForHealth) this.deps.health.recordFailure(this.endpointId, this.project);
  }

  /** No answer (or the client left first): counted; the error the caller gets. */
  failed(error: UpstreamFailure, clientGone: boolean): { code: ErrorCode; message: string } {
    this.count(clientGone ? 'client_aborted' : error);
    return error === 'upstream_timeout'
      ? { code: 'upstream_timeout', message: 'the upstream did not answer in time' }
      : { code: 'upstream_error', message: 'the upstream could not be reached' };
  }

  /** A paid request's answer that is not deliverable (health is told by the caller, with terms). */
  refused(status: number): void {
    this.count(status >= 500 ? 'upstream_5xx' : `upstream_${status}`);
  }

  /** An answer passed on as it is (5xx included). */
  answered(status: number): void {
    if (status >= 500) this.healthFailure(null);
    else this.deps.health.recordSuccess(this.endpointId, this.project);
    this.count(status >= 500 ? 'upstream_5xx' : 'ok');
  }

  /** The body broke after the headers. */
  cut(terms: RetryTerms | null): void {
    this.deps.metrics.upstream.inc({ outcome: 'cut' });
    this.healthFailure(terms);
  }
}

/**
 * Who paid and how much, for the origin (providers/payment-context.ts), signed with the
 * API's origin secret; unsigned when the API has no origin auth (docs/provider-api.md).
 */
function paymentContextFor(paid: PaidRequest, method: string, auth: OriginAuth, nowMs: number) {
  const { payment } = paid;
  const context = {
    payer: payment.payer,
    chain: payment.chain,
    network: payment.network,
    tx: payment.txId,
    amount: payment.option.splits.reduce((sum, s) => sum + s.amount, 0n),
    requirement: payment.requirementId,
  };
  const secret = auth.type === 'none' ? null : auth.secret;
  return (target: string) => paymentContextHeaders(context, { method, target }, { secret, nowMs });
}

/** The same quote with v2 offered; one object per quote, so a 402 keeps reusing its formatted parts. */
const v2Quotes = new WeakMap<Quote, Quote>();
function withV2(quote: Quote): Quote {
  let q = v2Quotes.get(quote);
  if (!q) {
    q = { ...quote, v2: true };
    v2Quotes.set(quote, q);
  }
  return q;
}

function firstHeader(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Origin auth of an API, decrypted once per API object (a catalogue reload keeps the object while the row is unchanged). */
const authOf = new WeakMap<Api, OriginAuth>();
export function originAuth(api: Api, deps: Deps): OriginAuth {
  const hit = authOf.get(api);
  if (hit) return hit;
  const secret = api.authSecretEnc ? deps.secretBox.open(api.authSecretEnc) : null;
  const auth: OriginAuth =
    api.authType === 'none' || secret === null
      ? { type: 'none' }
      : api.authType === 'bearer'
        ? { type: 'bearer', secret }
        : { type: api.authType, name: api.authName ?? '', secret };
  authOf.set(api, auth);
  return auth;
}
