/**
 * The x402 v2 `exact` port (DESIGN §4.12): one implementation per chain (solana/sponsor.ts,
 * sui/exact-v2.ts). Unlike the SPEC format, where the payer sends the transaction and a
 * proof of it, a v2 payer hands the gateway a signed transaction that has NOT been sent:
 * the gateway checks it (check), claims it, serves the request, and only after a
 * deliverable answer sends it (settle). So a v2 payer pays nothing when the upstream fails.
 *
 * Expected failures are values with x402-style snake_case reasons; RPC trouble throws
 * ChainUnavailableError, as everywhere in chains/.
 */
import type { ChainId } from './chain.ts';

/** What the gateway offered in the accepts entry the payer chose. */
export interface ExpectedTransfer {
  /** Recipient owner address (Solana: the wallet, whose associated token account receives). */
  payTo: string;
  /** Atomic units, exact. */
  amount: bigint;
  /** Solana mint / Sui coin type. */
  asset: string;
  /** Must appear exactly once (Solana: SPL Memo; Sui: a Pure string input). */
  memo: string;
}

/** A payload that passed every check and simulated successfully, ready to be settled. */
export interface CheckedPayment {
  /** The transaction id it has once sent (Solana: signatures[0], the sponsor's; Sui: the digest). */
  txId: string;
  /** The paying address (Solana: the transfer authority; Sui: the sender). */
  payer: string;
  /** Chain-specific state settle() needs (the decoded transaction). */
  readonly handle: unknown;
}

export type PaymentCheck = ({ ok: true } & CheckedPayment) | { ok: false; reason: string; message: string };

export type Settlement =
  /** The transaction is on-chain at the required commitment (also when it had landed before). */
  | { ok: true; txId: string }
  /** Definitely not on-chain and never will be (refused by the node, or its blockhash expired). */
  | { ok: false; reason: string; message: string };

export interface ExactV2Scheme {
  chain: ChainId;
  /** The v1 network label the redemption store keys on (`mainnet`, `localnet`). */
  network: string;
  /** CAIP-2 id advertised in `accepts[].network`. */
  caip2: string;
  /** Fields for `accepts[].extra` (Solana: `feePayer`; both: `memo`). */
  extra(memo: string): Record<string, unknown>;
  /**
   * Decodes and checks the scheme payload (`PaymentPayload.payload`) against the offer,
   * and simulates it. `simulate: false` skips the simulation (and anything else that asks
   * the chain): settlement uses it to learn the txId of a payload it may already have
   * claimed or settled, whose simulation would now fail.
   */
  check(
    payload: Record<string, unknown>,
    expected: ExpectedTransfer,
    opts?: { simulate?: boolean },
  ): Promise<PaymentCheck>;
  /** Sends the checked transaction (co-signing it first on Solana) and waits for it to land. Idempotent. */
  settle(payment: CheckedPayment): Promise<Settlement>;
}
