/**
 * The payment gate: from an `X-PAYMENT` header (or none) to one outcome. Shared by
 * the marketplace and inference routes. Order of checks is cheapest first; nothing
 * is written unless the payment verified on-chain, so a failed check never burns
 * a transaction or a nonce (DESIGN §4.4), and the redemption is one atomic claim.
 */
import {
  decodePaymentProof,
  type ErrorCode,
  encodePaymentReceipt,
  type PaymentProof,
  type PaymentRequirement,
  ProtocolError,
} from '@tollgate/protocol';
import {
  type ChainId,
  ChainUnavailableError,
  type ChainVerifier,
  type RejectReason,
} from '../chains/chain.ts';
import type { Metrics } from '../metrics.ts';
import type { Redemption, Store, StoredResponse } from '../store/store.ts';
import {
  issueRequirement,
  type Quote,
  quoteTotal,
  type RequestFacts,
  requestHashFor,
} from './requirement.ts';
import type { QuotedOption, RequirementClaims, RequirementTokens } from './requirement-token.ts';

export interface GateDeps {
  tokens: RequirementTokens;
  store: Store;
  verifiers: Partial<Record<ChainId, ChainVerifier>>;
  metrics: Metrics;
  now: () => number;
  requirementTtlSec: number;
  skewMs: number;
  leaseMs: number;
  /** How long after expiresAt a proof for a payment made in time may still be presented. */
  lateProofMs: number;
  log?: { error(obj: unknown, msg: string): void; warn(obj: unknown, msg: string): void };
}

export interface PaidLease {
  redemption: Redemption;
  claims: RequirementClaims;
  proof: PaymentProof;
  /** Value of the `X-PAYMENT-RESPONSE` header. */
  receiptHeader: string;
  /** How long the lease lasts without renewal, ms. */
  leaseMs: number;
  /** Stores the delivered response; later identical proofs replay it. False if the lease was lost. */
  complete(response: StoredResponse): Promise<boolean>;
  /** Gives the payment back to the same request for a retry (upstream failed). */
  release(): Promise<boolean>;
  /** Extends the lease while a long response is still streaming. */
  renew(): Promise<boolean>;
}

export type GateOutcome =
  | { kind: 'free' }
  | { kind: 'challenge'; requirement: PaymentRequirement }
  | {
      kind: 'error';
      code: ErrorCode;
      message: string;
      extra?: Record<string, unknown>;
      headers?: Record<string, string>;
    }
  | { kind: 'replay'; response: StoredResponse; receiptHeader: string }
  | { kind: 'paid'; lease: PaidLease };

/** Reasons the gate itself gives on a refused proof (the chain's own are REJECT_REASONS). */
export const GATE_REJECT_REASONS = [
  'requirement_malformed',
  'requirement_forged',
  'requirement_mismatch',
  'proof_mismatch',
  'unsupported_chain',
  'request_mismatch',
  'requirement_expired',
  'transaction_already_used',
  'nonce_already_used',
  'payer_mismatch',
] as const;
type GateRejectReason = (typeof GATE_REJECT_REASONS)[number];

export const PENDING_RETRY_AFTER_SEC = 2;
export const UNAVAILABLE_RETRY_AFTER_SEC = 5;

export function createPaymentGate(d: GateDeps) {
  const challenge = (
    quote: Quote,
    req: RequestFacts,
    reason?: GateRejectReason | RejectReason,
    message?: string,
  ): GateOutcome => {
    const { body } = issueRequirement(d.tokens, quote, req, d.now(), d.requirementTtlSec);
    return {
      kind: 'challenge',
      requirement: reason ? { ...body, reason, ...(message ? { message } : {}) } : body,
    };
  };
  const receiptFor = (proof: PaymentProof) =>
    encodePaymentReceipt({
      success: true,
      chain: proof.chain,
      network: proof.network,
      txHashOrDigest: proof.txHashOrDigest,
      payer: proof.payer,
      paymentRequirementId: proof.paymentRequirementId,
    });
  const count = (chain: string, outcome: string) => d.metrics.payments.inc({ chain, outcome });

  function lease(redemption: Redemption, claims: RequirementClaims, proof: PaymentProof): PaidLease {
    const { id, attempt } = redemption;
    return {
      redemption,
      claims,
      proof,
      receiptHeader: receiptFor(proof),
      leaseMs: d.leaseMs,
      complete: (response) => d.store.redemptions.complete(id, attempt, response, d.now()),
      release: () => d.store.redemptions.release(id, attempt),
      renew: () => d.store.redemptions.renew(id, attempt, d.now() + d.leaseMs),
    };
  }

  async function claim(
    claims: RequirementClaims,
    proof: PaymentProof,
    option: QuotedOption,
    reject: (reason: GateRejectReason, message: string) => GateOutcome,
  ): Promise<GateOutcome> {
    const result = await d.store.redemptions.claim({
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
    switch (result.kind) {
      case 'claimed':
        return { kind: 'paid', lease: lease(result.redemption, claims, proof) };
      case 'delivered':
        return replayOf(result.redemption, proof);
      case 'in_progress':
        return inProgress();
      case 'used_elsewhere':
        return result.by === 'tx'
          ? reject('transaction_already_used', 'this transaction already paid for another request')
          : reject('nonce_already_used', 'this requirement was already paid by another transaction');
    }
  }

  const inProgress = (): GateOutcome => ({
    kind: 'error',
    code: 'payment_in_progress',
    message: 'a request with this payment is still being served; retry shortly with the same X-PAYMENT',
    headers: { 'retry-after': '1' },
    extra: { retryable: true },
  });

  function replayOf(r: Redemption, proof: PaymentProof): GateOutcome {
    count(proof.chain, 'replayed');
    if (!r.response) {
      return {
        kind: 'error',
        code: 'conflict',
        message: 'this payment was already redeemed and its response is no longer kept',
        extra: { reason: 'response_not_retained' },
      };
    }
    return { kind: 'replay', response: r.response, receiptHeader: receiptFor(proof) };
  }

  return {
    /** Where unexpected verifier failures are reported (the app's logger, once it exists). */
    useLogger(log: NonNullable<GateDeps['log']>): void {
      d.log = log;
    },

    /**
     * Decides what to do with a paid-route request. `quote` is the current price of
     * the route; a proof is checked against the quote signed into its token instead.
     */
    async process(header: string | undefined, req: RequestFacts, quote: Quote): Promise<GateOutcome> {
      if (quoteTotal(quote) === 0n) return { kind: 'free' };
      if (header === undefined || header === '') return challenge(quote, req);

      let proof: PaymentProof;
      try {
        proof = decodePaymentProof(header);
        // Sui addresses are hex: compare them in one case, as the chain reports them.
        if (proof.chain === 'sui') proof = { ...proof, payer: proof.payer.toLowerCase() };
      } catch (e) {
        const message = e instanceof ProtocolError ? e.message : 'malformed X-PAYMENT header';
        return { kind: 'error', code: 'invalid_payment_header', message };
      }

      const reject = (reason: GateRejectReason, message: string) => challenge(quote, req, reason, message);
      const token = d.tokens.verify(proof.paymentRequirementId);
      if (!token.ok)
        return challenge(quote, req, token.reason, 'the paymentRequirementId is not one this gateway issued');
      const claims = token.claims;
      if (claims.subject !== quote.subject || claims.scheme !== proof.scheme) {
        return challenge(quote, req, 'requirement_mismatch', 'the requirement was issued for another route');
      }
      if (proof.nonce !== claims.nonce || proof.expiresAt !== new Date(claims.expiresAtMs).toISOString()) {
        return challenge(quote, req, 'proof_mismatch', 'nonce or expiresAt differ from the requirement');
      }
      const option = claims.options.find((o) => o.chain === proof.chain && o.network === proof.network);
      if (!option)
        return challenge(
          quote,
          req,
          'unsupported_chain',
          'the proof names a chain or network that was not offered',
        );
      // The token names the one request it was issued for; a proof re-hashed for another
      // request fails here even though its own hash would be self-consistent.
      if (proof.requestHash !== claims.requestHash || requestHashFor(claims, req) !== claims.requestHash) {
        return challenge(quote, req, 'request_mismatch', 'the request differs from the one that was quoted');
      }

      // A known transaction: answer from the database, without asking the chain again.
      const existing = await d.store.redemptions.byTx(proof.chain, proof.network, proof.txHashOrDigest);
      if (existing) {
        if (existing.nonce !== proof.nonce || existing.requestHash !== proof.requestHash) {
          return challenge(
            quote,
            req,
            'transaction_already_used',
            'this transaction already paid for another request',
          );
        }
        if (existing.payer !== proof.payer)
          return challenge(quote, req, 'payer_mismatch', 'the payer differs');
        if (existing.state === 'delivered') return replayOf(existing, proof);
        if (existing.state === 'in_progress' && existing.leaseUntilMs > d.now()) return inProgress();
        return claim(claims, proof, option, reject);
      }

      const now = d.now();
      if (now > claims.expiresAtMs + d.skewMs + d.lateProofMs) {
        return challenge(quote, req, 'requirement_expired', 'the payment requirement has expired');
      }
      const verifier = d.verifiers[proof.chain];
      if (!verifier || verifier.network !== proof.network) {
        return challenge(quote, req, 'unsupported_chain', `${proof.chain} payments are not accepted now`);
      }
      let verdict: Awaited<ReturnType<ChainVerifier['verify']>>;
      try {
        verdict = await verifier.verify({
          option: {
            chain: option.chain,
            network: option.network,
            asset: option.assetId,
            splits: option.splits,
            memo: option.memo,
          },
          issuedAtMs: claims.issuedAtMs,
          expiresAtMs: claims.expiresAtMs,
          skewMs: d.skewMs,
          payer: proof.payer,
          txHashOrDigest: proof.txHashOrDigest,
        });
      } catch (e) {
        if (!(e instanceof ChainUnavailableError)) d.log?.error({ err: e }, 'verifier failed unexpectedly');
        count(proof.chain, 'unavailable');
        return {
          kind: 'error',
          code: 'verification_unavailable',
          message: `cannot reach ${proof.chain} to verify the payment; retry with the same X-PAYMENT`,
          headers: { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SEC) },
          extra: { retryable: true },
        };
      }
      if (verdict.status === 'pending') {
        count(proof.chain, 'pending');
        return {
          kind: 'error',
          code: 'payment_pending',
          message: `the transaction is not ${verdict.reason === 'not_found' ? 'visible' : 'final'} yet; retry with the same X-PAYMENT`,
          headers: { 'retry-after': String(PENDING_RETRY_AFTER_SEC) },
          extra: { reason: verdict.reason, retryable: true },
        };
      }
      if (verdict.status === 'rejected') {
        count(proof.chain, 'rejected');
        return challenge(
          quote,
          req,
          verdict.reason,
          'the payment transaction does not satisfy the requirement',
        );
      }
      count(proof.chain, 'verified');
      return claim(claims, proof, option, reject);
    },
  };
}

export type PaymentGate = ReturnType<typeof createPaymentGate>;
