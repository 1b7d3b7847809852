/**
 * Proof checks: from an `X-PAYMENT` header to a proof bound to this request, and from
 * a bound proof to the chain's verdict. Cheapest first; nothing here writes, so a
 * failed check never burns a transaction or a nonce (DESIGN §4.4). What happens to a
 * verified payment (claim, lease, deliver) is settle.ts's business.
 */
import {
  decodePaymentProof,
  decodePaymentSignature,
  type PaymentProof,
  ProtocolError,
  type V2Requirements,
} from '@tollgate/protocol';
import {
  ChainUnavailableError,
  type ChainVerifier,
  type RejectReason,
  type VerifyResult,
} from '../chains/chain.ts';
import type { ExactV2Scheme } from '../chains/exact-v2.ts';
import type { Metrics } from '../metrics.ts';
import type { RequestFacts } from './requirement.ts';
import { requestHashFor } from './requirement.ts';
import type { QuotedOption, RequirementClaims, RequirementTokens } from './requirement-token.ts';
import { type V2PayTo, type V2Schemes, v2EntryFor } from './v2-offer.ts';

export interface ProofCheckDeps {
  tokens: RequirementTokens;
  verifiers: Partial<Record<string, ChainVerifier>>;
  metrics: Metrics;
  now: () => number;
  skewMs: number;
  /** How long after expiresAt a proof for a payment made in time may still be presented. */
  lateProofMs: number;
  /** x402 v2 `exact` schemes by chain, and where a v2 payment's whole amount goes. */
  v2Schemes?: V2Schemes;
  v2PayTo?: V2PayTo;
  /** The app's logger (app.ts creates it): unexpected verifier failures. */
  log: { error(obj: unknown, msg: string): void };
}

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
export type GateRejectReason = (typeof GATE_REJECT_REASONS)[number];

/** A proof whose token verified and that names this very request. */
export interface BoundProof {
  proof: PaymentProof;
  claims: RequirementClaims;
  option: QuotedOption;
}

/** A v2 `PAYMENT-SIGNATURE` whose echoed offer is one this gateway made, for this very request. */
export interface BoundV2 {
  claims: RequirementClaims;
  option: QuotedOption;
  /** The accepts entry as offered (and echoed back unchanged). */
  entry: V2Requirements;
  scheme: ExactV2Scheme;
  /** The scheme payload (`PaymentPayload.payload`). */
  payload: Record<string, unknown>;
}

export type InspectionV2 =
  | { kind: 'malformed'; message: string }
  | { kind: 'refused'; reason: GateRejectReason; message: string }
  | { kind: 'bound'; bound: BoundV2 };

export type Inspection =
  | { kind: 'none' }
  | { kind: 'malformed'; message: string }
  | { kind: 'refused'; reason: GateRejectReason; message: string }
  | { kind: 'bound'; bound: BoundProof };

export type ChainCheck =
  | { kind: 'verified' }
  | { kind: 'pending'; reason: 'not_found' | 'not_final' }
  | { kind: 'unavailable' }
  | { kind: 'refused'; reason: GateRejectReason | RejectReason; message: string };

export function createProofChecks(d: ProofCheckDeps) {
  const count = (chain: string, outcome: string) => d.metrics.payments.inc({ chain, outcome });
  const refused = (reason: GateRejectReason, message: string): Inspection => ({
    kind: 'refused',
    reason,
    message,
  });

  return {
    /**
     * Decodes the header and binds the proof to this request: the token is ours, names
     * `subject` (when the route still prices one), and was issued for exactly this request.
     */
    inspect(header: string | undefined, req: RequestFacts, subject: string | null): Inspection {
      if (header === undefined || header === '') return { kind: 'none' };
      let proof: PaymentProof;
      try {
        proof = decodePaymentProof(header);
        // Sui addresses are hex: compare them in one case, as the chain reports them.
        if (proof.chain === 'sui') proof = { ...proof, payer: proof.payer.toLowerCase() };
      } catch (e) {
        return { kind: 'malformed', message: e instanceof ProtocolError ? e.message : 'malformed X-PAYMENT' };
      }
      const token = d.tokens.verify(proof.paymentRequirementId);
      if (!token.ok) return refused(token.reason, 'the paymentRequirementId is not one this gateway issued');
      const claims = token.claims;
      if ((subject !== null && claims.subject !== subject) || claims.scheme !== proof.scheme) {
        return refused('requirement_mismatch', 'the requirement was issued for another route');
      }
      if (proof.nonce !== claims.nonce || proof.expiresAt !== new Date(claims.expiresAtMs).toISOString()) {
        return refused('proof_mismatch', 'nonce or expiresAt differ from the requirement');
      }
      const option = claims.options.find((o) => o.chain === proof.chain && o.network === proof.network);
      if (!option)
        return refused('unsupported_chain', 'the proof names a chain or network that was not offered');
      // The token names the one request it was issued for; a proof re-hashed for another
      // request fails here even though its own hash would be self-consistent.
      if (proof.requestHash !== claims.requestHash || requestHashFor(claims, req) !== claims.requestHash) {
        return refused('request_mismatch', 'the request differs from the one that was quoted');
      }
      return { kind: 'bound', bound: { proof, claims, option } };
    },

    /**
     * Decodes a `PAYMENT-SIGNATURE` and binds it to this request: the token echoed in
     * `accepted.extra` is ours, offered v2 for `subject`, the echoed entry is exactly the
     * one offered, and the requirement was issued for exactly this request.
     */
    inspectV2(header: string, req: RequestFacts, subject: string | null): InspectionV2 {
      let payload: ReturnType<typeof decodePaymentSignature>;
      try {
        payload = decodePaymentSignature(header);
      } catch (e) {
        return {
          kind: 'malformed',
          message: e instanceof ProtocolError ? e.message : 'malformed PAYMENT-SIGNATURE',
        };
      }
      const refusedV2 = (reason: GateRejectReason, message: string): InspectionV2 => ({
        kind: 'refused',
        reason,
        message,
      });
      const { accepted } = payload;
      const tokenText = accepted.extra.paymentRequirementId;
      if (typeof tokenText !== 'string') {
        return refusedV2('requirement_malformed', 'accepted.extra.paymentRequirementId is missing');
      }
      const token = d.tokens.verify(tokenText);
      if (!token.ok)
        return refusedV2(token.reason, 'the paymentRequirementId is not one this gateway issued');
      const claims = token.claims;
      if ((subject !== null && claims.subject !== subject) || !claims.v2 || accepted.scheme !== 'exact') {
        return refusedV2('requirement_mismatch', 'the requirement was issued for another route or scheme');
      }
      const schemes = d.v2Schemes ?? {};
      const option = claims.options.find(
        (o) => schemes[o.chain]?.caip2 === accepted.network && schemes[o.chain]?.network === o.network,
      );
      const scheme = option ? schemes[option.chain] : undefined;
      if (!option || !scheme) {
        return refusedV2(
          'unsupported_chain',
          'the payment names a network that was not offered or is not accepted now',
        );
      }
      const entry = v2EntryFor(option, claims.nonce, tokenText, schemes, d.v2PayTo ?? (() => null));
      if (!entry || !sameEntry(entry, accepted)) {
        return refusedV2('proof_mismatch', 'the accepted entry differs from the one offered');
      }
      if (requestHashFor(claims, req) !== claims.requestHash) {
        return refusedV2('request_mismatch', 'the request differs from the one that was quoted');
      }
      return { kind: 'bound', bound: { claims, option, entry, scheme, payload: payload.payload } };
    },

    /** Asks the chain whether the bound proof's transaction pays the quoted option. */
    async verifyOnChain({ proof, claims, option }: BoundProof): Promise<ChainCheck> {
      if (d.now() > claims.expiresAtMs + d.skewMs + d.lateProofMs) {
        return {
          kind: 'refused',
          reason: 'requirement_expired',
          message: 'the payment requirement has expired',
        };
      }
      const verifier = d.verifiers[proof.chain];
      if (!verifier || verifier.network !== proof.network) {
        return {
          kind: 'refused',
          reason: 'unsupported_chain',
          message: `${proof.chain} payments are not accepted now`,
        };
      }
      let verdict: VerifyResult;
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
        if (!(e instanceof ChainUnavailableError)) {
          d.log.error(
            { err: e, chain: proof.chain, tx: proof.txHashOrDigest },
            'verifier failed unexpectedly',
          );
        }
        count(proof.chain, 'unavailable');
        return { kind: 'unavailable' };
      }
      if (verdict.status === 'pending') {
        count(proof.chain, 'pending');
        return { kind: 'pending', reason: verdict.reason };
      }
      if (verdict.status === 'rejected') {
        count(proof.chain, 'rejected');
        return {
          kind: 'refused',
          reason: verdict.reason,
          message: 'the payment transaction does not satisfy the requirement',
        };
      }
      count(proof.chain, 'verified');
      d.metrics.paymentsAccepted.inc({ chain: proof.chain, format: 'v1' });
      return { kind: 'verified' };
    },
  };
}

export type ProofChecks = ReturnType<typeof createProofChecks>;

/** The echoed entry must be the offered one in every field that decides the payment. */
function sameEntry(offered: V2Requirements, echoed: V2Requirements): boolean {
  if (
    offered.scheme !== echoed.scheme ||
    offered.network !== echoed.network ||
    offered.amount !== echoed.amount ||
    offered.asset !== echoed.asset ||
    offered.payTo !== echoed.payTo
  ) {
    return false;
  }
  for (const [k, v] of Object.entries(offered.extra)) if (echoed.extra[k] !== v) return false;
  return true;
}
