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
import type { PaymentWallet } from './wallets/wallet.ts';

export type PayEvent =
  | { type: 'challenge'; url: string; requirement: PaymentRequirement }
  | { type: 'paying'; option: AcceptOption; wallet: string }
  | { type: 'paid'; txHashOrDigest: string; option: AcceptOption }
  | { type: 'retry'; attempt: number; reason: string; delayMs: number }
  | { type: 'done'; status: number };

export interface PayFetchOptions {
  /** Wallets in order of preference; the first whose chain is offered pays. */
  wallets: PaymentWallet[];
  /** Refuse to pay more than this per request (decimal USDC, e.g. "0.05"). */
  maxPerRequest?: string;
  /** Refuse to pay more than this in total over the life of this payFetch (decimal USDC). */
  maxPerSession?: string;
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

const RETRY_CODES = new Set(['payment_pending', 'payment_in_progress', 'verification_unavailable']);

/**
 * @example
 * const pay = payFetch(fetch, { wallets: [solanaWallet({ secretKey, rpcUrl })], maxPerRequest: '0.10' });
 * const res = await pay('http://127.0.0.1:8402/p/demo/weather?city=Oslo');
 */
export function payFetch(fetchImpl: FetchLike, opts: PayFetchOptions): PayFetch {
  const maxPerRequest = opts.maxPerRequest === undefined ? null : parseAmount(opts.maxPerRequest, 6);
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

    const first = await send({});
    if (first.status !== 402) return first;
    let requirement: PaymentRequirement;
    try {
      requirement = parsePaymentRequirement(await first.clone().json());
    } catch {
      return first; // Not an x402 challenge we understand: hand it back untouched.
    }
    emit({ type: 'challenge', url: request.url, requirement });

    const { wallet, option } = choose(requirement, opts.wallets);
    const total = checkOption(option);
    if (maxPerRequest !== null && total > maxPerRequest) {
      throw new ProtocolError(
        'payment_limit_exceeded',
        `price ${option.totalAmount} USDC exceeds the per-request limit ${opts.maxPerRequest}`,
      );
    }
    if (maxPerSession !== null && spent + total > maxPerSession) {
      throw new ProtocolError(
        'payment_limit_exceeded',
        `paying ${option.totalAmount} USDC would exceed the session limit ${opts.maxPerSession}`,
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

function choose(
  requirement: PaymentRequirement,
  wallets: PaymentWallet[],
): { wallet: PaymentWallet; option: AcceptOption } {
  for (const wallet of wallets) {
    const option = requirement.accepts.find((a) => a.chain === wallet.chain);
    if (option) return { wallet, option };
  }
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
