/**
 * ANY /p/:projectSlug/* — the paid proxy. Order: vet the path (invalid_path), find
 * the endpoint (endpoint_not_found), check availability (endpoint_unavailable, never
 * 402), then the payment gate, then forward and settle.
 */
import { EMPTY_BODY_SHA256, sha256Hex } from '@tollgate/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { sendError } from '../errors.ts';
import { endpointKey } from '../marketplace/catalog.ts';
import { flattenHeaders, streamAndSettle } from '../marketplace/deliver.ts';
import { splitMarketplaceTarget } from '../marketplace/paths.ts';
import { marketplaceQuote } from '../marketplace/quote.ts';
import type { PaidLease } from '../payments/gate.ts';
import { answerGateOutcome, failedReceipt } from '../payments/respond.ts';
import { readCapped } from '../proxy/forward.ts';
import type { OriginAuth } from '../proxy/forward-headers.ts';
import { CLIENT_ABORTED_CODE } from '../proxy/upstream-error.ts';
import type { Api } from '../store/store.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

export function marketplaceRoutes(app: FastifyInstance, deps: Deps): void {
  // The scheme callers use to reach us (TLS usually ends in front of the gateway).
  const forwardedProto = new URL(deps.config.publicBaseUrl).protocol.replace(':', '');
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const paid: { lease: PaidLease | null } = { lease: null };
    try {
      return await handle(req, reply, deps, forwardedProto, paid);
    } catch (err) {
      // Whatever failed after the payment was claimed, the payer keeps it for a retry
      // now rather than when the lease runs out. (A settled lease ignores this.)
      await paid.lease?.release().catch(() => false);
      throw err;
    }
  };
  app.register(async (scope) => {
    // Raw bytes for every content type: the bytes hashed are the bytes forwarded.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    scope.route({
      method: [...METHODS],
      url: '/p/:projectSlug',
      handler,
    });
    scope.route({ method: [...METHODS], url: '/p/:projectSlug/*', handler });
  });
}

async function handle(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  forwardedProto: string,
  paid: { lease: PaidLease | null },
): Promise<FastifyReply> {
  const target = splitMarketplaceTarget(request.url);
  if (!target.ok)
    return sendError(reply, 'invalid_path', 'the path is not allowed', { reason: target.reason });

  const entry = await deps.catalog.get(target.slug);
  const endpoint = entry?.endpoints.get(endpointKey(request.method, target.path));
  if (!entry || !endpoint) {
    return sendError(
      reply,
      'endpoint_not_found',
      `no endpoint ${request.method} /${target.path} in project ${target.slug}`,
    );
  }
  const api = entry.apis.get(endpoint.apiId);
  if (!endpoint.enabled || !api || !deps.health.isHealthy(endpoint.id)) {
    return sendError(
      reply,
      'endpoint_unavailable',
      'this endpoint is currently unavailable',
      {
        reason: !endpoint.enabled ? 'disabled' : !api ? 'no_origin' : 'unhealthy',
      },
      { 'retry-after': '30' },
    );
  }

  const quote = marketplaceQuote(target.slug, endpoint, entry.rails, deps.config, deps.verifiers);
  if (quote.options.length === 0 && quote.price + quote.fee > 0n) {
    return sendError(
      reply,
      'endpoint_unavailable',
      'this endpoint has no payment rail that can be used now',
      {
        reason: 'no_payment_rail',
      },
    );
  }

  const body = Buffer.isBuffer(request.body) && request.body.length > 0 ? request.body : null;
  const facts = {
    method: request.method,
    pathWithQuery: target.pathWithQuery,
    bodySha256: body ? sha256Hex(body) : EMPTY_BODY_SHA256,
  };
  const header = request.headers['x-payment'];
  const outcome = await deps.gate.process(Array.isArray(header) ? header[0] : header, facts, quote);

  const answered = answerGateOutcome(reply, outcome);
  if (answered) return answered;
  const lease: PaidLease | null = outcome.kind === 'paid' ? outcome.lease : null;
  paid.lease = lease;

  const abort = new AbortController();
  request.raw.once('close', () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  const auth = originAuth(api, deps);
  const result = await deps.forwarder.forward({
    baseUrl: api.baseUrl,
    path: target.path,
    query: target.query,
    method: request.method,
    headers: request.headers,
    body,
    auth,
    timeoutMs: endpoint.timeoutMs,
    clientIp: request.ip,
    forwardedProto,
    forwardedHost: String(request.headers.host ?? ''),
    requestId: String(request.id),
    signal: abort.signal,
  });

  const project = entry.project.slug;
  if (!result.ok) {
    // A caller that hung up says nothing about the upstream; counting it would let anyone
    // knock an endpoint out (503) by disconnecting mid-request.
    const clientGone = result.detail === CLIENT_ABORTED_CODE || abort.signal.aborted;
    if (!clientGone) deps.health.recordFailure(endpoint.id, project);
    deps.metrics.upstream.inc({ outcome: clientGone ? 'client_aborted' : result.error });
    if (lease) await lease.release();
    const code = result.error === 'upstream_timeout' ? 'upstream_timeout' : 'upstream_error';
    return sendError(
      reply,
      code,
      result.error === 'upstream_timeout'
        ? 'the upstream did not answer in time'
        : 'the upstream could not be reached',
      {
        retryable: lease !== null,
        reason: result.error,
      },
      lease ? { 'x-payment-response': failedReceipt(lease) } : {},
    );
  }

  if (result.status >= 500 && lease) {
    deps.health.recordFailure(endpoint.id, project);
    deps.metrics.upstream.inc({ outcome: 'upstream_5xx' });
    // Drain (bounded) so the pooled connection can be reused, then give the payment back.
    await readCapped(result.body, 64 * 1024).catch(() => undefined);
    await lease.release();
    return sendError(
      reply,
      'upstream_error',
      `the upstream answered ${result.status}; retry with the same X-PAYMENT`,
      { retryable: true, upstreamStatus: result.status },
      { 'x-payment-response': failedReceipt(lease) },
    );
  }

  // Requests that needed no payment get the upstream's answer as it is, 5xx included.
  if (result.status >= 500) deps.health.recordFailure(endpoint.id, project);
  else deps.health.recordSuccess(endpoint.id, project);
  deps.metrics.upstream.inc({ outcome: result.status >= 500 ? 'upstream_5xx' : 'ok' });
  return streamAndSettle(
    reply,
    result.status,
    flattenHeaders(result.headers),
    result.body,
    lease,
    deps.config.maxResponseBytes,
    (delivered) => {
      if (!delivered) deps.metrics.upstream.inc({ outcome: 'cut' });
    },
  );
}

/** Origin auth of an API, decrypted once per catalogue snapshot (a new snapshot brings new objects). */
const authOf = new WeakMap<Api, OriginAuth>();
function originAuth(api: Api, deps: Deps): OriginAuth {
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
