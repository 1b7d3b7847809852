/**
 * A paid request that holds its redemption's lease (settle.ts makes them). It renews
 * the lease while the upstream works and ends in exactly one of deliver, fail or
 * abandon. A v2 payment is not on-chain yet when the request is admitted: commit()
 * sends it, and must succeed before any byte of the answer leaves the gateway.
 */
import type { Settlement as ChainSettlement, CheckedPayment } from '../chains/exact-v2.ts';
import { type Metrics, reasonLabel } from '../metrics.ts';
import type { Redemption, RedemptionRepo, StoredResponse } from '../store/store.ts';
import { type PaymentLog, paidAmount } from './payment-log.ts';
import type { QuotedOption, RequirementClaims } from './requirement-token.ts';

/** Renew well before the lease runs out, and at least this often. */
const MAX_RENEW_EVERY_MS = 10_000;
/** A completion that hits a database error is tried this many times before giving up. */
const COMPLETE_TRIES = 3;

/** What the HTTP layer sends when a paid attempt failed and the payment stays with the request. */
export interface RetryTerms {
  retryAfterSec: number;
  /** True only for a proof's first failed upstream attempt: one proof counts once toward health. */
  countsForHealth: boolean;
  /** `Retry-After` and the failed receipt (`success: false`). */
  headers: Record<string, string>;
}

/** The payment behind a paid request, whichever wire format brought it. */
export interface PaymentRef {
  version: 1 | 2;
  chain: 'solana' | 'sui';
  /** The v1 network label the redemption store keys on. */
  network: string;
  txId: string;
  payer: string;
  /** The requirement token (`paymentRequirementId`). */
  requirementId: string;
  /** The marketplace project sold (its provider is owed its share of a v2 payment). */
  projectId?: string;
  claims: RequirementClaims;
  option: QuotedOption;
  /** Receipt headers: of a delivered answer, and of a failed attempt. */
  receipt(success: boolean, reason?: string): Record<string, string>;
  /** v2 only: sends the payment on-chain (co-signed, confirmed). */
  send?: () => Promise<ChainSettlement>;
  /** v2 only: the simulated check replaces the static one the ref was made from. */
  useChecked?: (checked: CheckedPayment) => void;
}

export interface PaidRequest {
  readonly redemptionId: string;
  readonly claims: RequirementClaims;
  readonly payment: PaymentRef;
  /** Receipt headers of a delivered answer (`X-PAYMENT-RESPONSE` or v2 `PAYMENT-RESPONSE`). */
  readonly receiptHeaders: Record<string, string>;
  /** True once deliver, fail or abandon ran. */
  readonly settled: boolean;
  /**
   * Makes sure the payment is on-chain before any byte of a deliverable answer is sent:
   * true at once for a SPEC proof (paid before it was sent); a v2 payment is sent and
   * confirmed here. On false the request is already abandoned; answer with
   * `settlementFailure` and release nothing.
   */
  commit(): Promise<boolean>;
  /** Why commit() failed, with the receipt headers to send. */
  readonly settlementFailure: { reason: string; message: string; headers: Record<string, string> } | null;
  /** The upstream answered deliverably: store the answer and complete the redemption. */
  deliver(response: StoredResponse): Promise<void>;
  /** The upstream failed (5xx, 408, 429, timeout, reset, oversize): the payment waits for a retry. */
  fail(reason: string): Promise<RetryTerms>;
  /** The gateway itself could not serve: the payment goes back at once, no retry window spent. */
  abandon(reason: string): Promise<void>;
}

export interface PaidRequestDeps {
  redemptions: RedemptionRepo;
  metrics: Metrics;
  now: () => number;
  leaseMs: number;
  paidRetryAfterSec: number;
  log?: { error(obj: unknown, msg: string): void; warn(obj: unknown, msg: string): void };
  /** Called once a v2 payment landed on-chain (the marketplace records the provider's payable). */
  onSent?: (paid: PaidRequest) => Promise<void>;
}

/** `log`: the request's access-log fields (payment-log.ts); this fills in how the request ended. */
export function createPaidRequest(
  d: PaidRequestDeps,
  redemption: Redemption,
  payment: PaymentRef,
  log?: PaymentLog,
): PaidRequest {
  return new HeldPayment(d, redemption, payment, log);
}

/**
 * A class, not an object literal: V8 makes the accessor pair of a literal's getter in the old
 * generation, and it points at the getter, so through the getters' context everything the
 * request's closures held outlived every scavenge until a mark-compact (2.2 KB per request in
 * paid-request.test.ts, 2.5-3 MB promoted per scavenge in the bench's paid scenario). Keep
 * getters on the prototype, never in a literal made per request.
 */
class HeldPayment implements PaidRequest {
  readonly redemptionId: string;
  readonly claims: RequirementClaims;
  readonly payment: PaymentRef;
  readonly receiptHeaders: Record<string, string>;
  #settled = false;
  #committed: boolean;
  #failure: PaidRequest['settlementFailure'] = null;
  #renewing: NodeJS.Timeout | null;
  readonly #d: PaidRequestDeps;
  readonly #attempt: number;
  readonly #failures: number;
  readonly #log: PaymentLog | undefined;

  constructor(d: PaidRequestDeps, redemption: Redemption, payment: PaymentRef, log: PaymentLog | undefined) {
    this.#d = d;
    this.redemptionId = redemption.id;
    this.#attempt = redemption.attempt;
    this.#failures = redemption.failures;
    this.claims = payment.claims;
    this.payment = payment;
    this.receiptHeaders = payment.receipt(true);
    this.#log = log;
    if (log) log.redemption = redemption.id;
    this.#committed = payment.send === undefined;
    this.#renewing = setInterval(
      HeldPayment.#renewLease,
      Math.max(100, Math.min(MAX_RENEW_EVERY_MS, Math.floor(d.leaseMs / 3))),
      this,
    );
    this.#renewing.unref();
  }

  get settled(): boolean {
    return this.#settled;
  }

  get settlementFailure(): PaidRequest['settlementFailure'] {
    return this.#failure;
  }

  /** What every line about this request carries; never the proof. */
  #ids() {
    return {
      redemption: this.redemptionId,
      attempt: this.#attempt,
      chain: this.payment.chain,
      tx: this.payment.txId,
    };
  }

  #ended(outcome: NonNullable<PaymentLog['outcome']>, reason?: string): void {
    const log = this.#log;
    if (!log) return;
    log.outcome = outcome;
    if (reason !== undefined) log.reason = reason;
  }

  #step(name: string, outcome: string): void {
    this.#d.metrics.settlement.inc({ step: name, outcome });
  }

  #stopRenewing(): void {
    if (this.#renewing) clearInterval(this.#renewing);
    this.#renewing = null;
  }

  /** The renewal timer's callback (setInterval's argument: no closure per request). */
  static #renewLease(this: void, paid: HeldPayment): void {
    void paid.#renew();
  }

  async #renew(): Promise<void> {
    const d = this.#d;
    try {
      const held = await d.redemptions.renew(this.redemptionId, this.#attempt, d.now() + d.leaseMs);
      // A renewal that was in flight while this request settled finds the row settled: fine.
      if (held || this.#settled) return;
      this.#stopRenewing();
      this.#step('renew', 'lease_lost');
      d.log?.error(this.#ids(), 'paid request lost its lease while in flight');
    } catch (err) {
      if (this.#settled) return;
      this.#step('renew', 'db_error');
      d.log?.error({ ...this.#ids(), err }, 'could not renew the lease of a paid request');
    }
  }

  #settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.#stopRenewing();
    return true;
  }

  async #release(kind: 'fail' | 'abandon', reason: string, retryAtMs: number): Promise<void> {
    const d = this.#d;
    try {
      const held = await d.redemptions.release(this.redemptionId, this.#attempt, {
        failed: kind === 'fail',
        retryAtMs,
      });
      this.#step(kind, held ? reason : 'lease_lost');
      if (!held) d.log?.error({ ...this.#ids(), reason }, 'paid request lost its lease before releasing it');
      else
        d.log?.warn(
          { ...this.#ids(), reason },
          `paid request ${kind === 'fail' ? 'failed upstream' : 'abandoned'}`,
        );
    } catch (err) {
      // The lease runs out on its own, and then the payment works again.
      this.#step(kind, 'db_error');
      d.log?.error(
        { ...this.#ids(), reason, err },
        'could not release a paid request; it frees when its lease ends',
      );
    }
  }

  async commit(): Promise<boolean> {
    if (this.#committed) return true;
    const { payment } = this;
    const d = this.#d;
    if (this.#settled || !payment.send) return false;
    let result: ChainSettlement;
    try {
      result = await payment.send();
    } catch (err) {
      // Not known to have landed: a retry with the same payment sends it again (idempotent).
      result = { ok: false, reason: 'settlement_unavailable', message: 'the chain could not be reached' };
      d.log?.error({ ...this.#ids(), err }, 'could not settle a v2 payment');
    }
    if (!result.ok) {
      this.#step('commit', result.reason);
      // The payer gets a 402 with this reason and is charged nothing: a refused payment.
      d.metrics.paymentsRejected.inc({ format: 'v2', reason: reasonLabel(result.reason) });
      this.#ended('not_settled', result.reason);
      d.log?.error(
        { ...this.#ids(), reason: result.reason },
        'v2 payment did not settle; the answer is withheld',
      );
      this.#failure = {
        reason: result.reason,
        message: result.message,
        headers: payment.receipt(false, result.reason),
      };
      if (this.#settle()) await this.#release('abandon', `settlement_${result.reason}`, 0);
      return false;
    }
    this.#committed = true;
    this.#step('commit', 'ok');
    if (d.onSent) {
      await d.onSent(this).catch((err) => {
        this.#step('commit', 'record_failed');
        d.log?.error({ ...this.#ids(), err }, 'v2 payment settled but its payable could not be recorded');
      });
    }
    return true;
  }

  async deliver(response: StoredResponse): Promise<void> {
    if (!this.#committed) throw new Error('deliver() before a successful commit()');
    if (!this.#settle()) return;
    const d = this.#d;
    // The payer gets this answer whether or not it could be stored.
    this.#ended('delivered');
    for (let tryNo = 1; ; tryNo++) {
      try {
        if (await d.redemptions.complete(this.redemptionId, this.#attempt, response, d.now())) {
          this.#step('deliver', 'ok');
          // Counted once per payment: only the attempt whose completion was stored.
          d.metrics.usdcVolume.inc({ chain: this.payment.chain }, Number(paidAmount(this.payment)));
        } else {
          // Fenced off: another attempt took the payment over. The payer still gets this answer.
          this.#step('deliver', 'lease_lost');
          d.log?.error(
            this.#ids(),
            'paid request lost its lease before completing; answer sent but not stored',
          );
        }
        return;
      } catch (err) {
        if (tryNo >= COMPLETE_TRIES) {
          this.#step('deliver', 'db_error');
          d.log?.error(
            { ...this.#ids(), err },
            'could not store a delivered answer; it frees when its lease ends',
          );
          return;
        }
        await new Promise((r) => setTimeout(r, 50 * tryNo));
      }
    }
  }

  async fail(reason: string): Promise<RetryTerms> {
    const { payment } = this;
    const d = this.#d;
    // A v2 payment was never sent: the payer is charged nothing, so no retry window applies.
    const v2 = payment.send !== undefined && !this.#committed;
    const retryAfterSec = v2 ? 0 : d.paidRetryAfterSec;
    if (this.#settle()) {
      this.#ended('failed', reason);
      await this.#release('fail', reason, d.now() + retryAfterSec * 1000);
    }
    return {
      retryAfterSec,
      countsForHealth: this.#failures === 0,
      headers: { 'retry-after': String(Math.max(1, retryAfterSec)), ...payment.receipt(false, reason) },
    };
  }

  async abandon(reason: string): Promise<void> {
    if (this.#settle()) {
      this.#ended('abandoned', reason);
      await this.#release('abandon', reason, 0);
    }
  }
}
