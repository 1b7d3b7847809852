/**
 * Paying one requirement under the payer's limits, shared by payFetch and the MCP
 * client (mcp.ts): choose the first wallet whose chain is offered and whose node is on
 * the offered network, check the splits add up, the per-request and per-session caps
 * and the quote's remaining lifetime (last, right before the money moves), pay, and
 * build the SPEC proof. Every refusal is a ProtocolError thrown before anything is paid.
 */
import {
  type AcceptOption,
  buildPaymentProof,
  encodePaymentProof,
  formatAmount,
  type PaymentProof,
  type PaymentRequirement,
  ProtocolError,
  parseAmount,
} from '@tollgate/protocol';
import { assertNetwork } from './wallets/network.ts';
import type { PaymentWallet } from './wallets/wallet.ts';

/** The per-request cap when the caller sets none: a typo'd price or a hostile gateway costs at most this. */
export const DEFAULT_MAX_PER_REQUEST = '0.10';
/** The least lifetime a quote must have left to be paid, when the caller sets none. */
export const DEFAULT_MIN_QUOTE_LIFETIME_MS = 30_000;

export type SpendEvent =
  | { type: 'paying'; option: AcceptOption; wallet: string }
  /** Money moved. `proof` is the X-PAYMENT value: keep it if you want to resend the request yourself. */
  | { type: 'paid'; txHashOrDigest: string; option: AcceptOption; proof: string };

export interface SpendOptions {
  /** Wallets in order of preference; the first whose chain is offered pays. */
  wallets: PaymentWallet[];
  /** Per-request cap (decimal USDC); default {@link DEFAULT_MAX_PER_REQUEST}; `null` removes it. */
  maxPerRequest?: string | null;
  /** Cap on the total over the life of this payer (decimal USDC). */
  maxPerSession?: string;
  /** Never pay a quote that expires sooner than this, ms (default 30 000). */
  minQuoteLifetimeMs?: number;
  onEvent?: (event: SpendEvent) => void;
}

export interface Payment {
  proof: PaymentProof;
  /** The proof as the `X-PAYMENT` header value. */
  encoded: string;
  option: AcceptOption;
  wallet: PaymentWallet;
}

export interface Spender {
  /** Total paid so far, atomic USDC units. */
  readonly spent: bigint;
  readonly minQuoteLifetimeMs: number;
  /** Pays `requirement` with the first fitting wallet, or throws before paying anything. */
  pay(requirement: PaymentRequirement, signal?: AbortSignal): Promise<Payment>;
}

export function createSpender(opts: SpendOptions): Spender {
  const maxPerRequestText = opts.maxPerRequest === undefined ? DEFAULT_MAX_PER_REQUEST : opts.maxPerRequest;
  const maxPerRequest = maxPerRequestText === null ? null : parseAmount(maxPerRequestText, 6);
  const minQuoteLifetimeMs = opts.minQuoteLifetimeMs ?? DEFAULT_MIN_QUOTE_LIFETIME_MS;
  const maxPerSession = opts.maxPerSession === undefined ? null : parseAmount(opts.maxPerSession, 6);
  let spent = 0n;

  return {
    get spent() {
      return spent;
    },
    minQuoteLifetimeMs,
    async pay(requirement, signal) {
      const { wallet, option } = await choose(requirement, opts.wallets, signal);
      const total = checkOption(option);
      if (maxPerRequest !== null && total > maxPerRequest) {
        throw new ProtocolError(
          'payment_limit_exceeded',
          `price ${option.totalAmount} USDC exceeds the per-request limit ${maxPerRequestText} USDC` +
            (opts.maxPerRequest === undefined ? ' (the default; set maxPerRequest to change it)' : ''),
        );
      }
      if (maxPerSession !== null && spent + total > maxPerSession) {
        throw new ProtocolError(
          'payment_limit_exceeded',
          `paying ${option.totalAmount} USDC would exceed the session limit ${opts.maxPerSession}`,
        );
      }
      // Checked last, right before the money moves.
      const left = lifetimeLeft(requirement);
      if (left < minQuoteLifetimeMs) {
        throw new ProtocolError(
          'quote_expired',
          left <= 0
            ? `the payment requirement expired at ${requirement.expiresAt}; nothing was paid`
            : `the payment requirement expires in ${Math.round(left / 1000)} s (at ${requirement.expiresAt}), ` +
                `less than the ${minQuoteLifetimeMs / 1000} s a payment needs to land; nothing was paid`,
        );
      }
      opts.onEvent?.({ type: 'paying', option, wallet: wallet.address });
      const txHashOrDigest = await wallet.pay(option, signal ? { signal } : {});
      spent += total;
      const proof = buildPaymentProof(requirement, option, { payer: wallet.address, txHashOrDigest });
      const encoded = encodePaymentProof(proof);
      opts.onEvent?.({ type: 'paid', txHashOrDigest, option, proof: encoded });
      return { proof, encoded, option, wallet };
    },
  };
}

/** ms until the requirement expires (negative once expired; -Infinity when unreadable). */
export function lifetimeLeft(requirement: PaymentRequirement): number {
  const at = Date.parse(requirement.expiresAt);
  return Number.isNaN(at) ? Number.NEGATIVE_INFINITY : at - Date.now();
}

/**
 * The first wallet (in the caller's order) whose chain is offered and whose node is on
 * the offered network. Nothing is paid here; a wallet on the wrong network is skipped.
 */
async function choose(
  requirement: PaymentRequirement,
  wallets: PaymentWallet[],
  signal?: AbortSignal,
): Promise<{ wallet: PaymentWallet; option: AcceptOption }> {
  let mismatch: ProtocolError | undefined;
  for (const wallet of wallets) {
    const option = requirement.accepts.find((a) => a.chain === wallet.chain);
    if (!option) continue;
    try {
      const identity = await wallet.chainIdentity(signal ? { signal } : {});
      assertNetwork(option, identity, `the node of wallet ${wallet.address}`);
      return { wallet, option };
    } catch (e) {
      if (!(e instanceof ProtocolError) || e.code !== 'network_mismatch') throw e;
      mismatch ??= e;
    }
  }
  if (mismatch) throw mismatch;
  const offered = requirement.accepts.map((a) => a.chain).join(', ') || 'none';
  throw new ProtocolError(
    'unsupported_chain',
    `none of the wallets' chains is accepted (offered: ${offered})`,
  );
}

/** The total of an option, after checking it adds up: never trust a total the splits don't make. */
function checkOption(option: AcceptOption): bigint {
  const total = parseAmount(option.totalAmount, option.decimals);
  const sum = option.splits.reduce((acc, s) => acc + parseAmount(s.amount, option.decimals), 0n);
  if (sum !== total) {
    throw new ProtocolError(
      'invalid_requirement',
      `splits add up to ${formatAmount(sum, option.decimals)}, not ${option.totalAmount}`,
    );
  }
  return total;
}
