/**
 * payFetch: a fetch that pays. On a 402 it picks the accept option for one of its
 * wallets, pays it on-chain, and retries the same request with `X-PAYMENT`. It waits
 * out `payment_pending` / `verification_unavailable` / `payment_in_progress` and
 * retries retryable upstream failures with the same proof — it never pays twice
 * for one call. Spending limits are checked before any money moves.
 */
import {
  type AcceptOption,
  buildPaymentProof,
  encodePaymentProof,
  formatAmount,
  type PaymentRequirement,
  ProtocolError,
  parseAmount,
  parsePaymentRequirement,
} from '@tollgate/protocol';
import { assertNetwork } from './wallets/network.ts';
import type { PaymentWallet } from './wallets/wallet.ts';

export type PayEvent =
  | { type: 'challenge'; url: string; requirement: PaymentRequirement }
  /** The quote expires within `minQuoteLifetimeMs`: asking once for a fresh one (nothing paid). */
  | { type: 'requote'; expiresAt: string }
  | { type: 'paying'; option: AcceptOption; wallet: string }
  | { type: 'paid'; txHashOrDigest: string; option: AcceptOption }
  | { type: 'retry'; attempt: number; reason: string; delayMs: number }
  | { type: 'done'; status: number };

export interface PayFetchOptions {
  /** Wallets in order of preference; the first whose chain is offered pays. */
  wallets: PaymentWallet[];
  /**
   * Refuse to pay more than this per request (decimal USDC, e.g. "0.05"). Default
   * {@link DEFAULT_MAX_PER_REQUEST} ("0.10"); `null` removes the cap (say so explicitly).
   */
  maxPerRequest?: string | null;
  /** Refuse to pay more than this in total over the life of this payFetch (decimal USDC). */
  maxPerSession?: string;
  /**
   * Never pay a quote that expires sooner than this, ms (default 30 000): the transaction
   * must land before `expiresAt`, or the gateway refuses it (`transaction_too_late`) and the
   * money is gone. A quote that is too short is asked for again once (unpaid); if the fresh
   * one is short too, the call throws `quote_expired` and nothing is paid.
   */
  minQuoteLifetimeMs?: number;
  /** How many times to re-send the same proof while the payment is pending or the upstream failed. */
  maxRetries?: number;
  /** Upper bound for one wait between retries, ms. */
  maxRetryDelayMs?: number;
  onEvent?: (event: PayEvent) => void;
}

export interface PayFetch {
  (input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** Total paid so far, atomic USDC units. */
  readonly spent: bigint;
}

type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** The per-request cap when the caller sets none: a typo'd price or a hostile gateway costs at most this. */
export const DEFAULT_MAX_PER_REQUEST = '0.10';
/** The least lifetime a quote must have left to be paid, when the caller sets none. */
export const DEFAULT_MIN_QUOTE_LIFETIME_MS = 30_000;

const RETRY_CODES = new Set(['payment_pending', 'payment_in_progress', 'verification_unavailable']);

/**
 * @example
 * const pay = payFetch(fetch, { wallets: [solanaWallet({ secretKey, rpcUrl })], maxPerRequest: '0.10' });
 * const res = await pay('http://127.0.0.1:8402/p/demo/weather?city=Oslo');
 */
export function payFetch(fetchImpl: FetchLike, opts: PayFetchOptions): PayFetch {
  const maxPerRequestText = opts.maxPerRequest === undefined ? DEFAULT_MAX_PER_REQUEST : opts.maxPerRequest;
  const maxPerRequest = maxPerRequestText === null ? null : parseAmount(maxPerRequestText, 6);
  const minQuoteLifetimeMs = opts.minQuoteLifetimeMs ?? DEFAULT_MIN_QUOTE_LIFETIME_MS;
  const maxPerSession = opts.maxPerSession === undefined ? null : parseAmount(opts.maxPerSession, 6);
  const maxRetries = opts.maxRetries ?? 8;
  const maxDelay = opts.maxRetryDelayMs ?? 5000;
  const emit = (e: PayEvent) => opts.onEvent?.(e);
  let spent = 0n;

  const pay = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    // Freeze the request so the paid retry sends exactly the same bytes.
    const request = new Request(input, init);
    const body = request.body ? new Uint8Array(await request.arrayBuffer()) : null;
    const send = (extra: Record<string, string>) => {
      const headers = new Headers(request.headers);
      for (const [k, v] of Object.entries(extra)) headers.set(k, v);
      return fetchImpl(request.url, {
        method: request.method,
        headers,
        body,
        redirect: 'manual',
        signal: init.signal ?? null,
      });
    };

    /** The unpaid request and its x402 challenge, or the answer to hand back when there is none. */
    const quote = async (): Promise<Response | PaymentRequirement> => {
      const res = await send({});
      if (res.status !== 402) return res;
      let requirement: PaymentRequirement;
      try {
        requirement = parsePaymentRequirement(await res.clone().json());
      } catch {
        return res; // Not an x402 challenge we understand: hand it back untouched.
      }
      emit({ type: 'challenge', url: request.url, requirement });
      return requirement;
    };

    let quoted = await quote();
    if (quoted instanceof Response) return quoted;
    if (lifetimeLeft(quoted) < minQuoteLifetimeMs) {
      // A quote that sat in a queue, or a slow first answer: one fresh quote costs nothing.
      emit({ type: 'requote', expiresAt: quoted.expiresAt });
      quoted = await quote();
      if (quoted instanceof Response) return quoted;
    }
    const requirement = quoted;

    const { wallet, option } = await choose(requirement, opts.wallets, init.signal ?? undefined);
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

    emit({ type: 'paying', option, wallet: wallet.address });
    const txHashOrDigest = await wallet.pay(option, init.signal ? { signal: init.signal } : {});
    spent += total;
    emit({ type: 'paid', txHashOrDigest, option });
    const header = encodePaymentProof(
      buildPaymentProof(requirement, option, { payer: wallet.address, txHashOrDigest }),
    );

    let response = await send({ 'x-payment': header });
    for (let attempt = 1; attempt <= maxRetries; attempt++) {
      const reason = await retryReason(response);
      if (!reason) break;
      const delayMs = Math.min(maxDelay, retryAfterMs(response) ?? 250 * 2 ** attempt);
      emit({ type: 'retry', attempt, reason, delayMs });
      await response.body?.cancel().catch(() => {});
      await sleep(delayMs, init.signal ?? undefined);
      response = await send({ 'x-payment': header });
    }
    emit({ type: 'done', status: response.status });
    return response;
  };
  Object.defineProperty(pay, 'spent', { get: () => spent });
  return pay as PayFetch;
}

/** ms until the requirement expires (negative once expired; -Infinity when unreadable). */
function lifetimeLeft(requirement: PaymentRequirement): number {
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

async function retryReason(res: Response): Promise<string | null> {
  if (![409, 502, 503, 504].includes(res.status)) return null;
  try {
    const body = (await res.clone().json()) as { error?: string; retryable?: boolean };
    if (body.error && RETRY_CODES.has(body.error)) return body.error;
    if (body.retryable === true) return body.error ?? 'retryable';
  } catch {
    // Not our JSON error: not something a retry with the same proof fixes.
  }
  return null;
}

function retryAfterMs(res: Response): number | null {
  const v = res.headers.get('retry-after');
  if (!v || !/^\d+$/.test(v)) return null;
  return Number(v) * 1000;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason);
    });
  });
}
