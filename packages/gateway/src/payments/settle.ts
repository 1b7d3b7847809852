/**
 * The settlement home (DESIGN §4.5): the whole life of a paid request, for every paid
 * surface. admit() takes a request from its X-PAYMENT header (or none) to one
 * admission: free, a 402, an error, a replay of a delivered answer, or a PaidRequest
 * that holds the redemption's lease. The PaidRequest renews its lease while the
 * upstream works and ends in exactly one of deliver() (the answer is stored, later
 * identical proofs replay it), fail() (the upstream failed: the payment goes back to
 * the same request after the retry window) or abandon() (the gateway failed: back at
 * once). Nothing else touches leases. Every failed step is logged by redemption id
 * (never the proof) and counted.
 *
 * Order of an admission: a proof bound to this request is looked up first, so a
 * replay beats every availability check; a paid proof is served unless the route says
 * it cannot be (the provider disabled or deleted it: a retryable 503 that keeps the
 * payment); only requests without a usable proof are quoted, and health decides
 * whether a quote is issued at all.
 */
import {
  type ErrorCode,
  encodePaymentReceipt,
  type PaymentProof,
  type PaymentRequirement,
} from '@tollgate/protocol';
import type { RejectReason } from '../chains/chain.ts';
import type { Metrics } from '../metrics.ts';
import type { Redemption, RedemptionRepo, StoredResponse } from '../store/store.ts';
import type { BoundProof, GateRejectReason, ProofChecks } from './gate.ts';
import { issueRequirement, type Quote, quoteTotal, type RequestFacts } from './requirement.ts';
import type { RequirementClaims, RequirementTokens } from './requirement-token.ts';

export const PENDING_RETRY_AFTER_SEC = 2;
export const UNAVAILABLE_RETRY_AFTER_SEC = 5;
/** Renew well before the lease runs out, and at least this often. */
const MAX_RENEW_EVERY_MS = 10_000;
/** A completion that hits a database error is tried this many times before giving up. */
const COMPLETE_TRIES = 3;

/** Why a route answers without serving: an error the HTTP layer renders. */
export interface Refusal {
  code: ErrorCode;
  message: string;
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
}

export type Admission =
  | { kind: 'free' }
  | { kind: 'challenge'; requirement: PaymentRequirement }
  | ({ kind: 'error' } & Refusal)
  | { kind: 'replay'; response: StoredResponse; receiptHeader: string }
  | { kind: 'paid'; paid: PaidRequest };

export interface AdmitInput {
  header: string | undefined;
  facts: RequestFacts;
  /** What the route prices now (a proof's token must name it); null when nothing is priced here any more. */
  subject: string | null;
  /** The route's quote for a fresh 402, or why none may be issued now (unhealthy, disabled, unknown). */
  quote(): Quote | Refusal;
  /** For a proof bound to this request: null when it can be served, or why not (the payment is kept). */
  servePaid(claims: RequirementClaims): Refusal | null;
}

/** What the HTTP layer sends when a paid attempt failed and the payment stays with the request. */
export interface RetryTerms {
  retryAfterSec: number;
  /** True only for a proof's first failed upstream attempt: one proof counts once toward health. */
  countsForHealth: boolean;
  /** `Retry-After` and the failed receipt (`X-PAYMENT-RESPONSE`, success: false). */
  headers: Record<string, string>;
}

export interface PaidRequest {
  readonly redemptionId: string;
  readonly claims: RequirementClaims;
  readonly proof: PaymentProof;
  /** Value of the `X-PAYMENT-RESPONSE` header of a delivered answer. */
  readonly receiptHeader: string;
  /** True once deliver, fail or abandon ran. */
  readonly settled: boolean;
  /** The upstream answered deliverably: store the answer and complete the redemption. */
  deliver(response: StoredResponse): Promise<void>;
  /** The upstream failed (5xx, 408, 429, timeout, reset, oversize): the payment waits for a retry. */
  fail(reason: string): Promise<RetryTerms>;
  /** The gateway itself could not serve: the payment goes back at once, no retry window spent. */
  abandon(reason: string): Promise<void>;
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
  /** The per-proof retry window after a failed upstream attempt. */
  paidRetryAfterSec: number;
  log?: Log;
}

const serviceUnavailable = (what: string): Refusal => ({
  code: 'service_unavailable',
  message: `the gateway could not ${what}; retry with the same X-PAYMENT`,
  extra: { retryable: true },
  headers: { 'retry-after': '1' },
});

function receiptFor(proof: PaymentProof, success: boolean): string {
  return encodePaymentReceipt({
    success,
    chain: proof.chain,
    network: proof.network,
    txHashOrDigest: proof.txHashOrDigest,
    payer: proof.payer,
    paymentRequirementId: proof.paymentRequirementId,
  });
}

export function createSettlement(d: SettlementDeps) {
  const step = (name: string, outcome: string) => d.metrics.settlement.inc({ step: name, outcome });
  const isRefusal = (q: Quote | Refusal): q is Refusal => 'code' in q;

  const challenge = (
    input: AdmitInput,
    reason?: GateRejectReason | RejectReason,
    message?: string,
  ): Admission => {
    const q = input.quote();
    // A route that may not quote now answers its refusal: never a 402 for it.
    if (isRefusal(q)) return { kind: 'error', ...q };
    const { body } = issueRequirement(d.tokens, q, input.facts, d.now(), d.requirementTtlSec);
    return {
      kind: 'challenge',
      requirement: reason ? { ...body, reason, ...(message ? { message } : {}) } : body,
    };
  };

  const inProgress = (): Admission => ({
    kind: 'error',
    code: 'payment_in_progress',
    message: 'a request with this payment is still being served; retry shortly with the same X-PAYMENT',
    headers: { 'retry-after': '1' },
    extra: { retryable: true },
  });

  const cooling = (r: Redemption): Admission => {
    const wait = Math.max(1, Math.ceil((r.retryAtMs - d.now()) / 1000));
    return {
      kind: 'error',
      code: 'rate_limited',
      message: `the last attempt with this payment failed; retry with the same X-PAYMENT in ${wait} s`,
      headers: { 'retry-after': String(wait) },
      extra: { retryable: true, reason: 'retry_budget' },
    };
  };

  function replayOf(r: Redemption, proof: PaymentProof): Admission {
    d.metrics.payments.inc({ chain: proof.chain, outcome: 'replayed' });
    if (!r.response) {
      return {
        kind: 'error',
        code: 'conflict',
        message: 'this payment was already redeemed and its response is no longer kept',
        extra: { reason: 'response_not_retained' },
      };
    }
    return { kind: 'replay', response: r.response, receiptHeader: receiptFor(proof, true) };
  }

  function paidRequest(redemption: Redemption, { proof, claims }: BoundProof): PaidRequest {
    const { id, attempt } = redemption;
    const ids = { redemption: id, attempt, chain: proof.chain, tx: proof.txHashOrDigest };
    let settled = false;
    let renewing: NodeJS.Timeout | null = setInterval(
      () => void renew(),
      Math.max(100, Math.min(MAX_RENEW_EVERY_MS, Math.floor(d.leaseMs / 3))),
    );
    renewing.unref();
    const stopRenewing = () => {
      if (renewing) clearInterval(renewing);
      renewing = null;
    };
    async function renew(): Promise<void> {
      try {
        if (await d.redemptions.renew(id, attempt, d.now() + d.leaseMs)) return;
        stopRenewing();
        step('renew', 'lease_lost');
        d.log?.error(ids, 'paid request lost its lease while in flight');
      } catch (err) {
        step('renew', 'db_error');
        d.log?.error({ ...ids, err }, 'could not renew the lease of a paid request');
      }
    }
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      stopRenewing();
      return true;
    };
    async function release(kind: 'fail' | 'abandon', reason: string, retryAtMs: number): Promise<void> {
      try {
        const held = await d.redemptions.release(id, attempt, { failed: kind === 'fail', retryAtMs });
        step(kind, held ? reason : 'lease_lost');
        if (!held) d.log?.error({ ...ids, reason }, 'paid request lost its lease before releasing it');
        else
          d.log?.warn(
            { ...ids, reason },
            `paid request ${kind === 'fail' ? 'failed upstream' : 'abandoned'}`,
          );
      } catch (err) {
        // The lease runs out on its own, and then the payment works again.
        step(kind, 'db_error');
        d.log?.error(
          { ...ids, reason, err },
          'could not release a paid request; it frees when its lease ends',
        );
      }
    }

    return {
      redemptionId: id,
      claims,
      proof,
      receiptHeader: receiptFor(proof, true),
      get settled() {
        return settled;
      },
      async deliver(response) {
        if (!settle()) return;
        for (let tryNo = 1; ; tryNo++) {
          try {
            if (await d.redemptions.complete(id, attempt, response, d.now())) {
              step('deliver', 'ok');
            } else {
              // Fenced off: another attempt took the payment over. The payer still gets this answer.
              step('deliver', 'lease_lost');
              d.log?.error(ids, 'paid request lost its lease before completing; answer sent but not stored');
            }
            return;
          } catch (err) {
            if (tryNo >= COMPLETE_TRIES) {
              step('deliver', 'db_error');
              d.log?.error(
                { ...ids, err },
                'could not store a delivered answer; it frees when its lease ends',
              );
              return;
            }
            await new Promise((r) => setTimeout(r, 50 * tryNo));
          }
        }
      },
      async fail(reason) {
        const retryAfterSec = d.paidRetryAfterSec;
        if (settle()) await release('fail', reason, d.now() + retryAfterSec * 1000);
        return {
          retryAfterSec,
          countsForHealth: redemption.failures === 0,
          headers: {
            'retry-after': String(Math.max(1, retryAfterSec)),
            'x-payment-response': receiptFor(proof, false),
          },
        };
      },
      async abandon(reason) {
        if (settle()) await release('abandon', reason, 0);
      },
    };
  }

  async function claim(bound: BoundProof, input: AdmitInput): Promise<Admission> {
    const { proof, claims, option } = bound;
    let result: Awaited<ReturnType<RedemptionRepo['claim']>>;
    try {
      result = await d.redemptions.claim({
        chain: proof.chain,
        network: proof.network,
        txId: proof.txHashOrDigest,
        nonce: proof.nonce,
        requestHash: proof.requestHash,
        requirementId: proof.paymentRequirementId,
        payer: proof.payer,
        meta: {
          subject: claims.subject,
          price: claims.price.toString(),
          fee: claims.fee.toString(),
          splits: option.splits.map((s) => ({ ...s, amount: s.amount.toString() })),
        },
        nowMs: d.now(),
        leaseMs: d.leaseMs,
      });
    } catch (err) {
      step('claim', 'db_error');
      d.log?.error(
        { err, chain: proof.chain, tx: proof.txHashOrDigest },
        'could not claim a verified payment',
      );
      return { kind: 'error', ...serviceUnavailable('record the payment') };
    }
    switch (result.kind) {
      case 'claimed':
        step('claim', 'ok');
        return { kind: 'paid', paid: paidRequest(result.redemption, bound) };
      case 'delivered':
        return replayOf(result.redemption, proof);
      case 'in_progress':
        return inProgress();
      case 'cooling':
        return cooling(result.redemption);
      case 'used_elsewhere':
        return result.by === 'tx'
          ? challenge(input, 'transaction_already_used', 'this transaction already paid for another request')
          : challenge(
              input,
              'nonce_already_used',
              'this requirement was already paid by another transaction',
            );
    }
  }

  async function admitBound(bound: BoundProof, input: AdmitInput): Promise<Admission> {
    const { proof } = bound;
    // A known transaction: answer from the database, without asking the chain again.
    let existing: Redemption | null;
    try {
      existing = await d.redemptions.byTx(proof.chain, proof.network, proof.txHashOrDigest);
    } catch (err) {
      step('lookup', 'db_error');
      d.log?.error({ err, chain: proof.chain, tx: proof.txHashOrDigest }, 'could not look up a payment');
      return { kind: 'error', ...serviceUnavailable('look up the payment') };
    }
    if (existing) {
      if (existing.nonce !== proof.nonce || existing.requestHash !== proof.requestHash) {
        return challenge(
          input,
          'transaction_already_used',
          'this transaction already paid for another request',
        );
      }
      if (existing.payer !== proof.payer) return challenge(input, 'payer_mismatch', 'the payer differs');
      if (existing.state === 'delivered') return replayOf(existing, proof);
    }
    const unservable = input.servePaid(bound.claims);
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
      return claim(bound, input);
    }

    const check = await d.checks.verifyOnChain(bound);
    switch (check.kind) {
      case 'verified':
        return claim(bound, input);
      case 'pending':
        return {
          kind: 'error',
          code: 'payment_pending',
          message: `the transaction is not ${check.reason === 'not_found' ? 'visible' : 'final'} yet; retry with the same X-PAYMENT`,
          headers: { 'retry-after': String(PENDING_RETRY_AFTER_SEC) },
          extra: { reason: check.reason, retryable: true },
        };
      case 'unavailable':
        return {
          kind: 'error',
          code: 'verification_unavailable',
          message: `cannot reach ${proof.chain} to verify the payment; retry with the same X-PAYMENT`,
          headers: { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SEC) },
          extra: { retryable: true },
        };
      case 'refused':
        return challenge(input, check.reason, check.message);
    }
  }

  return {
    /** Where settlement failures are reported (the app's logger, once it exists). */
    useLogger(log: Log): void {
      d.log = log;
    },

    /** Decides what a paid-route request gets (see the file comment for the order). */
    async admit(input: AdmitInput): Promise<Admission> {
      const seen = d.checks.inspect(input.header, input.facts, input.subject);
      if (seen.kind === 'bound') return admitBound(seen.bound, input);
      const q = input.quote();
      if (isRefusal(q)) return { kind: 'error', ...q };
      if (quoteTotal(q) === 0n) return { kind: 'free' };
      switch (seen.kind) {
        case 'none':
          return challenge(input);
        case 'malformed':
          return { kind: 'error', code: 'invalid_payment_header', message: seen.message };
        case 'refused':
          return challenge(input, seen.reason, seen.message);
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
