/**
 * The settlement home (DESIGN §4.5, §4.12): the whole life of a paid request, for every
 * paid surface and both wire formats. admit() takes a request from its `X-PAYMENT`
 * (SPEC) or `PAYMENT-SIGNATURE` (x402 v2) header, or none, to one admission: free, a
 * 402, an error, a replay of a delivered answer, or a PaidRequest (paid-request.ts)
 * that holds the redemption's lease and ends in deliver, fail or abandon. Nothing else
 * touches leases. Every failed step is logged by redemption id (never the proof) and
 * counted; every refused payment is counted by reason, and what is known of a request's
 * payment goes into its access-log line (AdmitInput.log).
 *
 * Order of an admission: a payment bound to this request is looked up first, so a
 * replay beats every availability check; a paid request is served unless the route
 * says it cannot be (the provider disabled or deleted it: a retryable 503 that keeps
 * the payment); only requests without a usable payment are quoted, and health decides
 * whether a quote is issued at all.
 *
 * A SPEC proof names a transaction already on-chain: it is verified, claimed, served.
 * A v2 payment is a signed transaction not yet sent: it is checked and simulated,
 * claimed, served, and sent (PaidRequest.commit) only once the upstream answered
 * deliverably, so a v2 payer pays nothing for an upstream failure.
 */
import {
  type ErrorCode,
  encodePaymentReceipt,
  encodeSettleResponse,
  memoForNonce,
  type PaymentRequirement,
  type V2PaymentRequired,
} from '@tollgate/protocol';
import type { RejectReason } from '../chains/chain.ts';
import { ChainUnavailableError } from '../chains/chain.ts';
import type { CheckedPayment, ExpectedTransfer } from '../chains/exact-v2.ts';
import { type Metrics, reasonLabel } from '../metrics.ts';
import type { Redemption, RedemptionRepo, StoredResponse } from '../store/store.ts';
import type { BoundProof, BoundV2, GateRejectReason, ProofChecks } from './gate.ts';
import {
  createPaidRequest,
  type PaidRequest,
  type PaidRequestDeps,
  type PaymentRef,
} from './paid-request.ts';
import { notePayment, type PaymentLog } from './payment-log.ts';
import { v1Receipt, v2Receipt } from './receipts.ts';
import {
  type IssuedRequirement,
  issueRequirement,
  type Quote,
  quoteTotal,
  type RequestFacts,
  requirementBody,
} from './requirement.ts';
import type { RequirementClaims, RequirementTokens } from './requirement-token.ts';
import { type V2PayTo, type V2Schemes, v2PaymentRequired } from './v2-offer.ts';

export type { PaidRequest, RetryTerms } from './paid-request.ts';

export const PENDING_RETRY_AFTER_SEC = 2;
export const UNAVAILABLE_RETRY_AFTER_SEC = 5;

/** Why a route answers without serving: an error the HTTP layer renders. */
export interface Refusal {
  code: ErrorCode;
  message: string;
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
}

export type Admission =
  | { kind: 'free' }
  | {
      kind: 'challenge';
      /**
       * What the 402 sends: the issued requirement, from whose JSON head it is written
       * (requirement.ts requirementJson), or the body as an object with a reason added.
       */
      body: IssuedRequirement | { requirement: PaymentRequirement };
      v2: V2PaymentRequired | null;
    }
  | ({ kind: 'error' } & Refusal)
  | { kind: 'replay'; response: StoredResponse; receiptHeaders: Record<string, string> }
  | { kind: 'paid'; paid: PaidRequest };

export interface AdmitInput {
  /** `X-PAYMENT` (SPEC proof). */
  header: string | undefined;
  /** `PAYMENT-SIGNATURE` (x402 v2 payment). */
  v2Header?: string | undefined;
  facts: RequestFacts;
  /** What the route prices now (a proof's token must name it); null when nothing is priced here any more. */
  subject: string | null;
  /** The route's quote for a fresh 402, or why none may be issued now (unhealthy, disabled, unknown). */
  quote(): Quote | Refusal;
  /** For a payment bound to this request: null when it can be served, or why not (the payment is kept). */
  servePaid(claims: RequirementClaims): Refusal | null;
  /** `extensions` of the v2 `PAYMENT-REQUIRED` (the bazaar description of the route). */
  v2Extensions?: () => Record<string, unknown> | undefined;
  /** The marketplace project sold, if any (a v2 payment owes its provider a payable). */
  projectId?: string;
  /** The request's access-log fields: filled with what is learnt of its payment. */
  log?: PaymentLog;
}

/** DESIGN §4.5: 2xx, 3xx, and 4xx except 408 and 429 are what was paid for. */
export function isDeliverable(status: number): boolean {
  return status >= 200 && status < 500 && status !== 408 && status !== 429;
}

type Log = {
  error(obj: unknown, msg: string): void;
  warn(obj: unknown, msg: string): void;
  info(obj: unknown, msg: string): void;
};

export interface SettlementDeps {
  checks: ProofChecks;
  tokens: RequirementTokens;
  redemptions: RedemptionRepo;
  metrics: Metrics;
  now: () => number;
  requirementTtlSec: number;
  leaseMs: number;
  skewMs: number;
  /** The per-proof retry window after a failed upstream attempt. */
  paidRetryAfterSec: number;
  /** `{base_url}`: v2 resources are absolute URLs. */
  publicBaseUrl: string;
  v2Schemes?: V2Schemes;
  v2PayTo?: V2PayTo;
  /** Called once a v2 payment landed on-chain (records the provider's payable on the marketplace). */
  onV2Sent?: PaidRequestDeps['onSent'];
  /** The app's logger (app.ts creates it). */
  log: Log;
}

const fmt = (ref: PaymentRef): 'v1' | 'v2' => (ref.version === 2 ? 'v2' : 'v1');

const serviceUnavailable = (what: string): Refusal => ({
  code: 'service_unavailable',
  message: `the gateway could not ${what}; retry with the same payment`,
  extra: { retryable: true },
  headers: { 'retry-after': '1' },
});

export function createSettlement(d: SettlementDeps) {
  const step = (name: string, outcome: string) => d.metrics.settlement.inc({ step: name, outcome });
  const isRefusal = (q: Quote | Refusal): q is Refusal => 'code' in q;
  const paidDeps = (): PaidRequestDeps => ({
    redemptions: d.redemptions,
    metrics: d.metrics,
    now: d.now,
    leaseMs: d.leaseMs,
    paidRetryAfterSec: d.paidRetryAfterSec,
    log: d.log,
    ...(d.onV2Sent ? { onSent: d.onV2Sent } : {}),
  });

  /** A refused payment: counted and noted by reason, then answered with a fresh 402 (with the reason). */
  const refuse = (
    input: AdmitInput,
    format: 'v1' | 'v2',
    reason: GateRejectReason | RejectReason | string,
    message?: string,
  ): Admission => {
    d.metrics.paymentsRejected.inc({ format, reason: reasonLabel(reason) });
    if (input.log) {
      input.log.format = format;
      input.log.reason = reason;
    }
    return challenge(input, reason, message);
  };
  const malformed = (input: AdmitInput, format: 'v1' | 'v2', message: string): Admission => {
    d.metrics.paymentsRejected.inc({ format, reason: 'invalid_payment_header' });
    if (input.log) input.log.format = format;
    return { kind: 'error', code: 'invalid_payment_header', message };
  };

  const challenge = (
    input: AdmitInput,
    reason?: GateRejectReason | RejectReason | string,
    message?: string,
    q: Quote | Refusal = input.quote(),
  ): Admission => {
    // A route that may not quote now answers its refusal: never a 402 for it.
    if (isRefusal(q)) return { kind: 'error', ...q };
    const issued = issueRequirement(d.tokens, q, input.facts, d.now(), d.requirementTtlSec);
    const { claims } = issued;
    const v2 = claims.v2
      ? v2PaymentRequired(
          claims,
          issued.paymentRequirementId,
          {
            url: `${d.publicBaseUrl}${input.facts.pathWithQuery}`,
            description: q.description,
            mimeType: 'application/json',
          },
          d.v2Schemes ?? {},
          d.v2PayTo ?? (() => null),
          input.v2Extensions?.(),
        )
      : null;
    // A reason is added to the body as an object; without one the body is sent from its JSON head.
    return {
      kind: 'challenge',
      body: reason
        ? { requirement: { ...requirementBody(q, issued), reason, ...(message ? { message } : {}) } }
        : issued,
      v2,
    };
  };

  const inProgress = (): Admission => ({
    kind: 'error',
    code: 'payment_in_progress',
    message: 'a request with this payment is still being served; retry shortly with the same payment',
    headers: { 'retry-after': '1' },
    extra: { retryable: true },
  });

  const cooling = (r: Redemption): Admission => {
    const wait = Math.max(1, Math.ceil((r.retryAtMs - d.now()) / 1000));
    return {
      kind: 'error',
      code: 'rate_limited',
      message: `the last attempt with this payment failed; retry with the same payment in ${wait} s`,
      headers: { 'retry-after': String(wait) },
      extra: { retryable: true, reason: 'retry_budget' },
    };
  };

  const refunded = (): Admission => ({
    kind: 'error',
    code: 'conflict',
    message: 'this payment was not delivered and has been refunded to the payer; pay again for a new answer',
    extra: { reason: 'payment_refunded' },
  });

  function replayOf(r: Redemption, ref: PaymentRef, log: PaymentLog | undefined): Admission {
    d.metrics.payments.inc({ chain: ref.chain, outcome: 'replayed' });
    // Only the read models (payments pages) show the count: a failure here is logged, never fatal.
    d.redemptions.noteReplay(r.id).catch((err: unknown) => {
      step('replay_count', 'db_error');
      d.log.warn({ err, redemption: r.id }, 'could not count a replay');
    });
    if (log) {
      log.redemption = r.id;
      log.outcome = 'replayed';
    }
    if (!r.response) {
      return {
        kind: 'error',
        code: 'conflict',
        message: 'this payment was already redeemed and its response is no longer kept',
        extra: { reason: 'response_not_retained' },
      };
    }
    return { kind: 'replay', response: r.response, receiptHeaders: ref.receipt(true) };
  }

  async function lookUp(ref: PaymentRef): Promise<Redemption | null | Admission> {
    try {
      return await d.redemptions.byTx(ref.chain, ref.network, ref.txId);
    } catch (err) {
      step('lookup', 'db_error');
      d.log.error({ err, chain: ref.chain, tx: ref.txId }, 'could not look up a payment');
      return { kind: 'error', ...serviceUnavailable('look up the payment') };
    }
  }
  const isAdmission = (v: Redemption | null | Admission): v is Admission => v !== null && 'kind' in v;

  async function claim(ref: PaymentRef, input: AdmitInput): Promise<Admission> {
    const { claims, option } = ref;
    let result: Awaited<ReturnType<RedemptionRepo['claim']>>;
    try {
      result = await d.redemptions.claim({
        chain: ref.chain,
        network: ref.network,
        txId: ref.txId,
        nonce: claims.nonce,
        requestHash: claims.requestHash,
        requirementId: ref.requirementId,
        payer: ref.payer,
        projectId: input.projectId ?? null,
        endpointId: claims.subject.startsWith('ep:') ? claims.subject.slice(3) : null,
        amount: option.splits.reduce((sum, s) => sum + s.amount, 0n),
        fee: claims.fee,
        meta: {
          subject: claims.subject,
          price: claims.price.toString(),
          fee: claims.fee.toString(),
          ...(ref.version === 2 ? { x402Version: 2 } : {}),
          splits: option.splits.map((s) => ({ ...s, amount: s.amount.toString() })),
        },
        nowMs: d.now(),
        leaseMs: d.leaseMs,
      });
    } catch (err) {
      step('claim', 'db_error');
      d.log.error({ err, chain: ref.chain, tx: ref.txId }, 'could not claim a payment');
      return { kind: 'error', ...serviceUnavailable('record the payment') };
    }
    switch (result.kind) {
      case 'claimed':
        step('claim', 'ok');
        return { kind: 'paid', paid: createPaidRequest(paidDeps(), result.redemption, ref, input.log) };
      case 'delivered':
        return replayOf(result.redemption, ref, input.log);
      case 'in_progress':
        return inProgress();
      case 'refunded':
        return refunded();
      case 'cooling':
        return cooling(result.redemption);
      case 'used_elsewhere':
        return result.by === 'tx'
          ? refuse(
              input,
              fmt(ref),
              'transaction_already_used',
              'this transaction already paid for another request',
            )
          : refuse(
              input,
              fmt(ref),
              'nonce_already_used',
              'this requirement was already paid by another transaction',
            );
    }
  }

  /**
   * What both formats share once the payment's transaction id is known: a known
   * transaction is answered from the database (replay, in progress, cooling) before
   * anything asks the chain; an unknown one is verified (`verify`) and then claimed.
   */
  async function admitPayment(
    ref: PaymentRef,
    input: AdmitInput,
    verify: () => Promise<Admission | null>,
  ): Promise<Admission> {
    notePayment(input.log, ref);
    const existing = await lookUp(ref);
    if (isAdmission(existing)) return existing;
    if (existing) {
      if (existing.nonce !== ref.claims.nonce || existing.requestHash !== ref.claims.requestHash) {
        return refuse(
          input,
          fmt(ref),
          'transaction_already_used',
          'this transaction already paid for another request',
        );
      }
      if (existing.payer !== ref.payer) return refuse(input, fmt(ref), 'payer_mismatch', 'the payer differs');
      if (existing.state === 'delivered') return replayOf(existing, ref, input.log);
      if (existing.refundState !== null) return refunded();
    }
    const unservable = input.servePaid(ref.claims);
    if (unservable) {
      return {
        kind: 'error',
        ...unservable,
        extra: { ...unservable.extra, retryable: true },
        headers: { 'retry-after': '30', ...unservable.headers },
      };
    }
    if (existing) {
      if (existing.state === 'in_progress' && existing.leaseUntilMs > d.now()) return inProgress();
      if (existing.state === 'retryable' && existing.retryAtMs > d.now()) return cooling(existing);
      return claim(ref, input);
    }
    const refused = await verify();
    return refused ?? claim(ref, input);
  }

  function v1Ref(bound: BoundProof): PaymentRef {
    const { proof, claims, option } = bound;
    return {
      version: 1,
      chain: proof.chain,
      network: proof.network,
      txId: proof.txHashOrDigest,
      payer: proof.payer,
      requirementId: proof.paymentRequirementId,
      claims,
      option,
      receipt: (success) => ({
        'x-payment-response': encodePaymentReceipt(
          v1Receipt({
            success,
            chain: proof.chain,
            network: proof.network,
            txId: proof.txHashOrDigest,
            payer: proof.payer,
            requirementId: proof.paymentRequirementId,
          }),
        ),
      }),
    };
  }

  async function admitV1(bound: BoundProof, input: AdmitInput): Promise<Admission> {
    return admitPayment(v1Ref(bound), input, async () => {
      const check = await d.checks.verifyOnChain(bound);
      switch (check.kind) {
        case 'verified':
          return null;
        case 'pending':
          if (input.log) input.log.reason = check.reason;
          return {
            kind: 'error',
            code: 'payment_pending',
            message: `the transaction is not ${check.reason === 'not_found' ? 'visible' : 'final'} yet; retry with the same X-PAYMENT`,
            headers: { 'retry-after': String(PENDING_RETRY_AFTER_SEC) },
            extra: { reason: check.reason, retryable: true },
          };
        case 'unavailable':
          return chainUnavailable(bound.proof.chain);
        case 'refused':
          return refuse(input, 'v1', check.reason, check.message);
      }
    });
  }

  const chainUnavailable = (chain: string): Admission => ({
    kind: 'error',
    code: 'verification_unavailable',
    message: `cannot reach ${chain} to check the payment; retry with the same payment`,
    headers: { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SEC) },
    extra: { retryable: true },
  });

  function v2Ref(bound: BoundV2, checked: CheckedPayment, projectId: string | undefined): PaymentRef {
    const { scheme, claims, option, entry } = bound;
    let payment = checked;
    return {
      ...(projectId ? { projectId } : {}),
      version: 2,
      chain: scheme.chain,
      network: scheme.network,
      txId: checked.txId,
      payer: checked.payer,
      requirementId: String(entry.extra.paymentRequirementId),
      claims,
      option,
      receipt: (success, reason) => ({
        'payment-response': encodeSettleResponse(
          v2Receipt({
            success,
            txId: checked.txId,
            network: scheme.caip2,
            payer: checked.payer,
            amount: entry.amount,
            ...(reason !== undefined ? { reason } : {}),
          }),
        ),
      }),
      send: () => scheme.settle(payment),
      useChecked(full: CheckedPayment) {
        payment = full;
      },
    };
  }

  type CheckResult = Awaited<ReturnType<BoundV2['scheme']['check']>>;

  async function admitV2(bound: BoundV2, input: AdmitInput): Promise<Admission> {
    const expected: ExpectedTransfer = {
      payTo: bound.entry.payTo,
      amount: BigInt(bound.entry.amount),
      asset: bound.entry.asset,
      memo: memoForNonce(bound.claims.nonce),
    };
    const refuseV2 = (reason: string, message: string) => refuse(input, 'v2', reason, message);
    const { scheme } = bound;
    /** The scheme's check; an unreachable chain (or a failing check) is a retryable outage, counted. */
    const check = async (simulate: boolean): Promise<CheckResult | Admission> => {
      try {
        return await scheme.check(bound.payload, expected, simulate ? undefined : { simulate: false });
      } catch (err) {
        if (!(err instanceof ChainUnavailableError)) {
          d.log.error({ err, chain: scheme.chain }, 'v2 payment check failed unexpectedly');
        }
        d.metrics.payments.inc({ chain: scheme.chain, outcome: 'unavailable' });
        return chainUnavailable(scheme.chain);
      }
    };
    // Static checks only: they name the transaction, which may already be claimed or sent.
    const known = await check(false);
    if ('kind' in known) return known;
    if (!known.ok) return refuseV2(known.reason, known.message);
    const ref = v2Ref(bound, known, input.projectId);
    return admitPayment(ref, input, async () => {
      if (d.now() > bound.claims.expiresAtMs + d.skewMs) {
        return refuseV2('requirement_expired', 'the payment requirement has expired');
      }
      const full = await check(true);
      if ('kind' in full) return full;
      if (!full.ok) {
        // A concurrent send of this same payment may have claimed and settled it while this
        // one simulated (its simulation then fails): answer as for a known payment.
        const now = await lookUp(ref);
        if (isAdmission(now)) return now;
        if (now && now.nonce === ref.claims.nonce && now.requestHash === ref.claims.requestHash) {
          return now.state === 'delivered' ? replayOf(now, ref, input.log) : inProgress();
        }
        d.metrics.payments.inc({ chain: scheme.chain, outcome: 'rejected' });
        return refuseV2(full.reason, full.message);
      }
      d.metrics.payments.inc({ chain: scheme.chain, outcome: 'verified' });
      d.metrics.paymentsAccepted.inc({ chain: scheme.chain, format: 'v2' });
      ref.useChecked?.(full);
      return null;
    });
  }

  /**
   * A request that carries no payment header at all: its route's refusal, free, or a 402.
   * Synchronous and without side effects but the 402's issue (nothing is written): the fast
   * path (http/fast-unpaid.ts) asks it too and serves only a challenge or free, else leaves the request
   * to the route, which asks admit() again.
   */
  function unpaid(input: AdmitInput): Admission {
    const q = input.quote();
    if (isRefusal(q)) return { kind: 'error', ...q };
    if (quoteTotal(q) === 0n) return { kind: 'free' };
    // The quote just made: a 402 (the most common unpaid answer) prices the route once.
    return challenge(input, undefined, undefined, q);
  }

  return {
    /** admit() for a request with neither X-PAYMENT nor PAYMENT-SIGNATURE (see unpaid). */
    admitUnpaid: unpaid,

    /** Decides what a paid-route request gets (see the file comment for the order). */
    async admit(input: AdmitInput): Promise<Admission> {
      if (input.v2Header !== undefined && input.v2Header !== '') {
        if (input.header !== undefined && input.header !== '') {
          return malformed(input, 'v2', 'send either X-PAYMENT or PAYMENT-SIGNATURE, not both');
        }
        const seen = d.checks.inspectV2(input.v2Header, input.facts, input.subject);
        if (seen.kind === 'bound') return admitV2(seen.bound, input);
        if (seen.kind === 'malformed') return malformed(input, 'v2', seen.message);
        return refuse(input, 'v2', seen.reason, seen.message);
      }
      const seen = d.checks.inspect(input.header, input.facts, input.subject);
      if (seen.kind === 'bound') return admitV1(seen.bound, input);
      if (seen.kind === 'none') return unpaid(input);
      const q = input.quote();
      if (isRefusal(q)) return { kind: 'error', ...q };
      if (quoteTotal(q) === 0n) return { kind: 'free' };
      switch (seen.kind) {
        case 'malformed':
          return malformed(input, 'v1', seen.message);
        case 'refused':
          return refuse(input, 'v1', seen.reason, seen.message);
      }
    },

    /**
     * Runs `serve` for an admitted paid request; if it throws before the request settled,
     * the payment goes back at once (abandon) instead of when the lease runs out.
     */
    async serve<T>(paid: PaidRequest | null, serve: () => Promise<T>): Promise<T> {
      try {
        return await serve();
      } catch (err) {
        if (paid && !paid.settled) await paid.abandon('gateway_error');
        throw err;
      }
    },
  };
}

export type Settlement = ReturnType<typeof createSettlement>;
