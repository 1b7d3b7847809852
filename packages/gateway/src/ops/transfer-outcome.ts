/**
 * Learning the fate of a signed platform-wallet transfer, as payouts (payout.ts) and
 * refunds (refund.ts) both must: poll until it landed or cannot land while holding the
 * lease, and resolve one an interrupted run recorded by re-sending the very same bytes
 * while it may still land (so no second transfer is signed while the first could land).
 */
import { SOLANA_MAINNET_GENESIS_HASH, SUI_MAINNET_CHAIN_ID } from '@tollgate/protocol';
import type { Chain } from '../store/store.ts';
import type { PayoutChain, PayoutTxStatus, SignedPayout } from './payout-chain.ts';

export const errorMessage = (e: unknown) => (e instanceof Error ? e.message : String(e));

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Why a chain's node must not be paid from on the gateway's network (mainnet vs not), or null. */
export function networkMismatch(chain: Chain, identity: string, network: string): string | null {
  const mainnetId = chain === 'solana' ? SOLANA_MAINNET_GENESIS_HASH : SUI_MAINNET_CHAIN_ID;
  if ((network === 'mainnet') === (identity === mainnetId)) return null;
  return `the ${chain} node is on chain ${identity} (${identity === mainnetId ? 'mainnet' : 'not mainnet'}), but the gateway's network is ${network}`;
}

/** How a payout or refund run holds its lease and waits for its transactions. */
export interface TransferTiming {
  now?: () => number;
  /** How long a run holds its lease (a payout's lock, a refund) without renewal (renewed while waiting). Default 60 s. */
  leaseMs?: number;
  /** How long to wait for a sent transaction to land or fail. Default 90 s. */
  confirmTimeoutMs?: number;
  pollMs?: number;
  /** Progress lines for a human (stderr in the CLI). */
  log?: (line: string) => void;
}

/** A run's timing with the defaults filled in. */
export function transferTiming(o: TransferTiming): Required<TransferTiming> {
  return {
    now: o.now ?? Date.now,
    leaseMs: o.leaseMs ?? 60_000,
    confirmTimeoutMs: o.confirmTimeoutMs ?? 90_000,
    pollMs: o.pollMs ?? 1_000,
    log: o.log ?? (() => {}),
  };
}

export interface OutcomeWait extends Required<TransferTiming> {
  /** Extends the lease until `leaseUntilMs`; false when another run took the transfer over. */
  renew: (leaseUntilMs: number, nowMs: number) => Promise<boolean>;
  /** The 'unknown' reason when the lease was lost, e.g. `another run took the refund over`. */
  lost: string;
}

/** Polls until the transaction landed or cannot land, renewing the lease; 'unknown' at the deadline. */
export async function awaitOutcome(
  wallet: PayoutChain,
  signed: SignedPayout,
  o: OutcomeWait,
): Promise<PayoutTxStatus> {
  const deadline = o.now() + o.confirmTimeoutMs;
  let last: PayoutTxStatus = { kind: 'unknown', reason: 'not checked' };
  for (;;) {
    try {
      last = await wallet.status(signed);
    } catch (e) {
      // A flaky node is no verdict: keep asking until the deadline.
      last = { kind: 'unknown', reason: `status check failed: ${errorMessage(e)}` };
    }
    if (last.kind !== 'unknown' || o.now() >= deadline) return last;
    if (!(await o.renew(o.now() + o.leaseMs, o.now()))) return { kind: 'unknown', reason: o.lost };
    await sleep(o.pollMs);
  }
}

/**
 * The fate of a transaction an interrupted run recorded: checked first; while it may still
 * land, the very same bytes are sent again and awaited. `label` names it in the log line.
 */
export async function recheckRecorded(
  wallet: PayoutChain,
  signed: SignedPayout,
  o: OutcomeWait & { label: string },
): Promise<PayoutTxStatus> {
  let outcome: PayoutTxStatus;
  try {
    outcome = await wallet.status(signed);
  } catch (e) {
    outcome = { kind: 'unknown', reason: `status check failed: ${errorMessage(e)}` };
  }
  if (outcome.kind !== 'unknown') return outcome;
  // At most this one transaction can land for what it pays.
  try {
    await wallet.send(signed);
  } catch (e) {
    o.log(`${o.label}: re-sending ${signed.tx} failed (${errorMessage(e)}); checking it anyway`);
  }
  return awaitOutcome(wallet, signed, o);
}
