/**
 * The chain verifier port. Adapters (solana/, sui/) only fetch a transaction and
 * normalise it into an ObservedTransaction; every decision is made here, by the
 * pure `decide`, so the rules are the same on both chains and testable without I/O.
 */

export type ChainId = 'sui' | 'solana';

export interface OfferedSplit {
  recipientType: 'provider' | 'platform';
  payTo: string;
  /** Atomic units. */
  amount: bigint;
}

/** What the gateway offered in one accept option, as quoted in the requirement token. */
export interface OfferedOption {
  chain: ChainId;
  network: string;
  /** Solana: the mint address. Sui: the fully qualified coin type. Compared exactly (Sui: normalised). */
  asset: string;
  splits: OfferedSplit[];
  /** Must appear exactly once in the transaction (SPL Memo on Solana, Pure string input on Sui). */
  memo: string;
}

export interface VerifyInput {
  option: OfferedOption;
  /** When the requirement was issued / expires (ms since epoch). */
  issuedAtMs: number;
  expiresAtMs: number;
  /** Grace for clock skew on both ends of the window. */
  skewMs: number;
  payer: string;
  txHashOrDigest: string;
}

export interface ObservedLeg {
  owner: string;
  /** Net change of the offered asset for this owner, atomic units (negative = paid out). */
  delta: bigint;
}

/** Chain-neutral record of a fetched transaction. Produced by an adapter's normaliser. */
export interface ObservedTransaction {
  /**
   * The transaction's own id, the one it is redeemed under (Solana: `signatures[0]`;
   * Sui: the digest). A proof must name the transaction by it, so one payment has one id.
   */
  id: string;
  /** false = the chain has the transaction but not at the required finality yet. */
  final: boolean;
  success: boolean;
  /**
   * On-chain time (Solana blockTime, Sui checkpoint timestamp), ms since epoch; null if the
   * node does not report it (yet): such a transaction is pending, never verified nor refused.
   */
  timeMs: number | null;
  /** Solana: every signer. Sui: the sender. */
  signers: string[];
  /**
   * Addresses that authorised movements of the offered asset (Solana: the `authority`
   * of token transfer instructions of that mint; Sui: the sender). The payer must be
   * the only one, so a proof cannot claim money that someone else moved.
   */
  assetAuthorities: string[];
  /** Per-owner net change of every asset, keyed by the adapter's exact asset id. */
  deltas: { owner: string; asset: string; delta: bigint }[];
  /** Every memo candidate found (Solana: top-level SPL Memo texts; Sui: Pure string inputs). */
  memos: string[];
}

export type VerifyResult =
  | { status: 'verified'; timeMs: number; legs: ObservedLeg[] }
  | { status: 'pending'; reason: 'not_found' | 'not_final' }
  | { status: 'rejected'; reason: RejectReason };

export const REJECT_REASONS = [
  'transaction_id_not_canonical',
  'transaction_failed',
  'payer_not_signer',
  'payer_not_authority',
  'memo_missing',
  'memo_duplicated',
  'amount_mismatch',
  'wrong_asset',
  'transaction_too_old',
  'transaction_too_late',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

/** Infrastructure failure (RPC down, timeout, malformed node answer). Never a verdict on the payment. */
export class ChainUnavailableError extends Error {
  override readonly name = 'ChainUnavailableError';
  readonly chain: ChainId;
  constructor(chain: ChainId, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.chain = chain;
  }
}

export interface ChainVerifier {
  readonly chain: ChainId;
  readonly network: string;
  /** Resolves to a verdict; throws ChainUnavailableError when the chain cannot be asked. */
  verify(input: VerifyInput): Promise<VerifyResult>;
}

/**
 * Adapters implement this: fetch and normalise, nothing else. `null` = not found.
 * `sameAsset` lets the adapter say how its asset ids compare (Sui normalises struct tags).
 * `wellFormed` (optional) says whether a string can be a transaction id of this chain at
 * all; `fetch` answers null for one that cannot, without asking the node.
 */
export interface TransactionSource {
  readonly chain: ChainId;
  readonly network: string;
  fetch(txHashOrDigest: string): Promise<ObservedTransaction | null>;
  sameAsset(a: string, b: string): boolean;
  wellFormed?(txHashOrDigest: string): boolean;
}

export function decide(
  input: VerifyInput,
  tx: ObservedTransaction,
  sameAsset: (a: string, b: string) => boolean,
): VerifyResult {
  // A Solana transaction with several signers can be fetched by any of them on some nodes:
  // only its first signature names it, or one payment could be redeemed under two ids.
  if (tx.id !== input.txHashOrDigest) return { status: 'rejected', reason: 'transaction_id_not_canonical' };
  if (!tx.final) return { status: 'pending', reason: 'not_final' };
  if (!tx.success) return { status: 'rejected', reason: 'transaction_failed' };
  if (!tx.signers.includes(input.payer)) return { status: 'rejected', reason: 'payer_not_signer' };

  const memoCount = tx.memos.filter((m) => m === input.option.memo).length;
  if (memoCount === 0) return { status: 'rejected', reason: 'memo_missing' };
  if (memoCount > 1) return { status: 'rejected', reason: 'memo_duplicated' };

  const { asset } = input.option;
  const inAsset = tx.deltas.filter((d) => sameAsset(d.asset, asset));
  if (inAsset.length === 0) {
    return { status: 'rejected', reason: tx.deltas.length > 0 ? 'wrong_asset' : 'amount_mismatch' };
  }
  if (tx.assetAuthorities.some((a) => a !== input.payer))
    return { status: 'rejected', reason: 'payer_not_authority' };

  // Several splits may name the same wallet (e.g. provider == platform): require the sum.
  const owed = new Map<string, bigint>();
  for (const s of input.option.splits) owed.set(s.payTo, (owed.get(s.payTo) ?? 0n) + s.amount);
  const received = new Map<string, bigint>();
  for (const d of inAsset) received.set(d.owner, (received.get(d.owner) ?? 0n) + d.delta);
  const legs: ObservedLeg[] = [];
  for (const [owner, amount] of owed) {
    const got = received.get(owner) ?? 0n;
    if (amount > 0n && got < amount) return { status: 'rejected', reason: 'amount_mismatch' };
    legs.push({ owner, delta: got });
  }

  // Otherwise fine, but the node has no time for it yet (Solana: blockTime null on some
  // nodes for very recent transactions): ask again later, as for a transaction not final.
  if (tx.timeMs === null) return { status: 'pending', reason: 'not_final' };
  if (tx.timeMs < input.issuedAtMs - input.skewMs)
    return { status: 'rejected', reason: 'transaction_too_old' };
  if (tx.timeMs > input.expiresAtMs + input.skewMs)
    return { status: 'rejected', reason: 'transaction_too_late' };
  return { status: 'verified', timeMs: tx.timeMs, legs };
}

/**
 * Builds a ChainVerifier from an adapter: fetch, then decide. Unguarded: production
 * verifiers go through `guardedVerifier` (guard.ts), which caps and caches lookups.
 */
export function verifierFrom(source: TransactionSource): ChainVerifier {
  return {
    chain: source.chain,
    network: source.network,
    async verify(input) {
      const tx = await source.fetch(input.txHashOrDigest);
      if (tx === null) return { status: 'pending', reason: 'not_found' };
      return decide(input, tx, (a, b) => source.sameAsset(a, b));
    },
  };
}
