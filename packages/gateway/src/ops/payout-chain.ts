/**
 * What the payout and refund commands need from a chain (one file per chain beside
 * this one): sign one batched USDC transfer from the platform wallet, broadcast it,
 * and tell whether a recorded transaction moved the money, cannot any more, or may still.
 */
import type { Chain } from '../store/store.ts';

export interface Transfer {
  recipient: string;
  /** Atomic USDC units, > 0. */
  amount: bigint;
}

/** A signed payout transaction as the payouts table records it, before it is sent. */
export interface SignedPayout {
  /** Solana signature or Sui digest: known before sending. */
  tx: string;
  /** Enough to send it again (chain-specific text). */
  txBytes: string;
  /** When it can no longer land (Solana: last valid block height), or null. */
  txExpiry: string | null;
}

export type SendResult =
  | { kind: 'sent' }
  /** The node refused it before execution (preflight, signature, stale input): it did not run. */
  | { kind: 'refused'; reason: string };

export type PayoutTxStatus =
  /** Executed successfully at the required commitment: the money moved. */
  | { kind: 'landed' }
  /** Executed and failed, or can never execute: the money did not and will not move. */
  | { kind: 'failed'; reason: string }
  /** Not seen yet, and it may still land. */
  | { kind: 'unknown'; reason: string };

export interface PayoutChain {
  readonly chain: Chain;
  /** The platform wallet paying out. */
  readonly address: string;
  /** Recipients one transaction pays at most. */
  readonly maxTransfersPerTx: number;
  /** The node's chain identity (Solana genesis hash, Sui chain id). */
  identity(): Promise<string>;
  isRecipient(address: string): boolean;
  /** The platform wallet's USDC, atomic units. */
  usdcBalance(): Promise<bigint>;
  /** The platform wallet's native coin for fees (lamports, MIST). */
  gasBalance(): Promise<bigint>;
  /** Builds and signs one transaction paying every transfer; `memo` is written into it. */
  sign(transfers: Transfer[], memo: string): Promise<SignedPayout>;
  /** Broadcasts (again) a signed payout. Throws when the outcome is unknown (network, timeout). */
  send(signed: SignedPayout): Promise<SendResult>;
  status(signed: SignedPayout): Promise<PayoutTxStatus>;
  /**
   * The fate of any transaction by its id (a payer's payment, for the refund command):
   * executed successfully at the required commitment, executed and failed, or not seen.
   */
  txOutcome(tx: string): Promise<'landed' | 'failed' | 'unseen'>;
}
