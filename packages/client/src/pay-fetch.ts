/**
 * payFetch: a fetch that pays. On a 402 it picks the accept option for one of its
 * wallets, pays it on-chain, and retries the same request with `X-PAYMENT`. Before any
 * money moves it checks the spending limits (0.10 USDC per request by default), that
 * the quote lives at least `minQuoteLifetimeMs` more, and that the wallet's node is on
 * the option's network. After paying it re-sends the same proof while the gateway says
 * `retryable: true` (see paid-retry.ts) — it never pays twice for one call — and when
 * the retries give up it throws the proof back (`UndeliveredPaymentError`).
 *
 * Under an SDK that turns whatever its fetch throws into a connection error (the
 * `openai` SDK: "Connection error."), those failures are answered as Responses instead
 * (`errorsAsResponses`), in the OpenAI error envelope, so the SDK raises an API error
 * with the message and the code.
 */
import { type PaymentRequirement, ProtocolError, parsePaymentRequirement } from '@tollgate/protocol';
import { gatewayErrorOf, jsonObject } from './error-body.ts';
import { type RetryEvent, retryWithProof, UndeliveredPaymentError } from './paid-retry.ts';
import { createSpender, lifetimeLeft, type SpendEvent } from './spend.ts';
import type { PaymentWallet } from './wallets/wallet.ts';

export type { PaidRequest, RetryEvent } from './paid-retry.ts';
export { DEFAULT_MAX_PER_REQUEST, DEFAULT_MIN_QUOTE_LIFETIME_MS } from './spend.ts';

export type PayEvent =
  | { type: 'challenge'; url: string; requirement: PaymentRequirement }
  /** The quote expires within `minQuoteLifetimeMs`: asking once for a fresh one (nothing paid). */
  | { type: 'requote'; expiresAt: string }
  | SpendEvent
  | RetryEvent
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
  /**
   * How many times to re-send the same proof while the answer says `retryable: true`
   * (payment pending, upstream failed, rate limited, …). Default 8. When they are used
   * up, the call throws `UndeliveredPaymentError` carrying the proof.
   */
  maxRetries?: number;
  /** Upper bound for one wait between retries, ms; `Retry-After` is honoured up to it. Default 5000. */
  maxRetryDelayMs?: number;
  /**
   * Answer payFetch's own failures with a Response instead of throwing: a refusal to pay
   * (`payment_limit_exceeded`, `quote_expired`, `network_mismatch`, `unsupported_chain`,
   * `invalid_requirement`) or a wallet that could not pay → 402; paid but not delivered
   * → the gateway's last status (502 when unreachable) with `proof`, `gatewayError` and
   * `retryable: true`; and a proof the gateway refused (its 402) is rewritten the same
   * way. The body is OpenAI's `{ error: { message, type: "payment_error", code, param } }`
   * and `X-Should-Retry: false` keeps the SDK from retrying (which would pay again); the
   * gateway's own final error after paying gets that header too.
   * A failure to reach the gateway before paying, and an abort, are still thrown.
   *
   * Default: on when the request carries `X-Stainless-Lang`, the header of SDKs generated
   * by Stainless such as `openai`, which turn any error their fetch throws into
   * "Connection error."; off for everyone else, who get the thrown errors.
   */
  errorsAsResponses?: boolean;
  onEvent?: (event: PayEvent) => void;
}

export interface PayFetch {
  (input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** Total paid so far, atomic USDC units. */
  readonly spent: bigint;
}

type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * Wraps a fetch so that it pays 402 challenges. Throws `ProtocolError` before paying
 * (`payment_limit_exceeded`, `quote_expired`, `network_mismatch`, `unsupported_chain`,
 * `invalid_requirement`), a wallet error if the payment itself fails, and
 * `UndeliveredPaymentError` (with the proof) when it paid but the retries gave up —
 * or, with `errorsAsResponses` (on by itself under the `openai` SDK), answers those as
 * error Responses. Any other answer, after paying or not, is returned as the Response.
 * @example
 * const pay = payFetch(fetch, { wallets: [solanaWallet({ secretKey, rpcUrl })], maxPerRequest: '0.05' });
 * try {
 *   const res = await pay('http://127.0.0.1:8402/p/demo/weather?city=Oslo');
 * } catch (e) {
 *   if (e instanceof UndeliveredPaymentError) keep(e.request); // retryWithProof(fetch, e.request) later
 *   else throw e;
 * }
 */
export function payFetch(fetchImpl: FetchLike, opts: PayFetchOptions): PayFetch {
  const emit = (e: PayEvent) => opts.onEvent?.(e);
  const spender = createSpender({
    wallets: opts.wallets,
    ...(opts.maxPerRequest !== undefined ? { maxPerRequest: opts.maxPerRequest } : {}),
    ...(opts.maxPerSession !== undefined ? { maxPerSession: opts.maxPerSession } : {}),
    ...(opts.minQuoteLifetimeMs !== undefined ? { minQuoteLifetimeMs: opts.minQuoteLifetimeMs } : {}),
    onEvent: emit,
  });
  const { minQuoteLifetimeMs } = spender;

  const pay = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    // Freeze the request so the paid retry sends exactly the same bytes.
    const request = new Request(input, init);
    const body = request.body ? new Uint8Array(await request.arrayBuffer()) : null;
    const asResponses = opts.errorsAsResponses ?? request.headers.has('x-stainless-lang');
    const state: PayState = { paying: false };
    if (!asResponses) return payFor(request, body, init, state);
    let res: Response;
    try {
      res = await payFor(request, body, init, state);
    } catch (e) {
      // Not reaching the gateway before paying is a connection error; an abort is the caller's.
      if (!state.paying || init.signal?.aborted) throw e;
      return failureResponse(e, state.proof);
    }
    if (!state.proof || res.status < 400) return res;
    return res.status === 402 ? refusedProofResponse(res, state.proof) : withoutSdkRetry(res);
  };

  const payFor = async (
    request: Request,
    body: Uint8Array | null,
    init: RequestInit,
    state: PayState,
  ): Promise<Response> => {
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
    // From here on a failure is the payment's, not the connection's.
    state.paying = true;

    const { encoded: proof } = await spender.pay(requirement, init.signal ?? undefined);
    state.proof = proof;

    // From here on the request is only ever sent again with this proof: never paid twice.
    const headers = Object.fromEntries(request.headers);
    delete headers['x-payment'];
    const response = await retryWithProof(
      fetchImpl,
      { url: request.url, method: request.method, headers, body, proof },
      {
        maxRetries: opts.maxRetries ?? 8,
        maxRetryDelayMs: opts.maxRetryDelayMs ?? 5000,
        ...(init.signal ? { signal: init.signal } : {}),
        onEvent: emit,
      },
    );
    emit({ type: 'done', status: response.status });
    return response;
  };
  Object.defineProperty(pay, 'spent', { get: () => spender.spent });
  return pay as PayFetch;
}

/** How far one call got: whether it had a requirement to pay, and the proof once it paid. */
interface PayState {
  paying: boolean;
  proof?: string;
}

/**
 * An error Response in OpenAI's envelope, made by payFetch itself (never the gateway's):
 * `X-Tollgate-Error-Source: client` says so, and `X-Should-Retry: false` stops an SDK
 * from retrying by itself, which would pay again.
 */
function clientErrorResponse(
  status: number,
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
): Response {
  const error = { message, type: 'payment_error', code, param: null, ...extra };
  const body = { error, ...(extra.retryable !== undefined ? { retryable: extra.retryable } : {}) };
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'x-should-retry': 'false',
      'x-tollgate-error-source': 'client',
    },
  });
}

/**
 * The gateway's final error answer to a paid request, marked `X-Should-Retry: false`:
 * the SDK would otherwise retry a 409/429/5xx by itself, get a fresh 402, and pay again.
 */
function withoutSdkRetry(res: Response): Response {
  const headers = new Headers(res.headers);
  headers.set('x-should-retry', 'false');
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

/** A failure of the payment phase as a Response: the refusal's code, or the undelivered proof. */
function failureResponse(e: unknown, proof: string | undefined): Response {
  if (e instanceof UndeliveredPaymentError) {
    return clientErrorResponse(e.status ?? 502, e.code, e.message, {
      ...(e.gatewayError ? { gatewayError: e.gatewayError } : {}),
      retryable: true,
      proof: e.proof,
    });
  }
  if (e instanceof ProtocolError) {
    return clientErrorResponse(402, e.code, e.message, proof ? { proof } : {});
  }
  const message = e instanceof Error ? e.message : String(e);
  return clientErrorResponse(402, 'payment_failed', `the payment could not be made: ${message}`, {
    ...(proof ? { proof } : {}),
  });
}

/**
 * The gateway refused the proof it was just paid with (a 402 with `reason`): said with
 * the reason in the message, and the proof (the money moved) for whoever looks into it.
 * A 402 that is not the gateway's `payment_required` (an upstream's own) is left alone.
 */
async function refusedProofResponse(res: Response, proof: string): Promise<Response> {
  const body = await jsonObject(res);
  const { gatewayError, message, fields } = gatewayErrorOf(body);
  if (gatewayError !== 'payment_required') return res;
  await res.body?.cancel().catch(() => {});
  const reason = typeof fields?.reason === 'string' ? fields.reason : undefined;
  return clientErrorResponse(
    402,
    'payment_required',
    `the gateway refused the payment proof${reason ? ` (${reason})` : ''}${message ? `: ${message}` : ''}`,
    { ...(reason ? { reason } : {}), proof },
  );
}
