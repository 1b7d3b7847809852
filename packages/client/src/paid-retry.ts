/**
 * After paying: send the paid request, and again with the same proof while the gateway
 * says the payment is still good but the request was not served (`retryable: true`,
 * `payment_pending`, …). Never pays. When the retries give up, the proof and the request
 * come back in an `UndeliveredPaymentError`, so the payer can send them again later
 * (`retryWithProof`): the gateway keeps a redeemed payment for its request until it is
 * delivered (DESIGN §4.5).
 */
import { decodePaymentReceipt, ProtocolError } from '@tollgate/protocol';
import { gatewayErrorOf, jsonObject, RETRY_CODES } from './error-body.ts';

/** Everything needed to send a paid request again: the request as it was hashed, and its proof. */
export interface PaidRequest {
  url: string;
  method: string;
  /** The request's headers, without `X-PAYMENT`. */
  headers: Record<string, string>;
  /** The exact body bytes (the request hash covers them), or null. */
  body: Uint8Array | null;
  /** The `X-PAYMENT` header value: the base64 proof. */
  proof: string;
}

export type RetryEvent = { type: 'retry'; attempt: number; reason: string; delayMs: number };

export interface RetryOptions {
  /** How many times to re-send the same proof after the first paid attempt. Default 8. */
  maxRetries?: number;
  /** Upper bound for one wait between retries, ms (a longer `Retry-After` is cut to this). Default 5000. */
  maxRetryDelayMs?: number;
  signal?: AbortSignal;
  onEvent?: (event: RetryEvent) => void;
}

/**
 * Paid, not delivered (yet): the retries gave up while the gateway still answered
 * "retry with the same X-PAYMENT", or could not be reached. Nothing was paid twice.
 * Keep `request` (it holds the proof) and send it again later with `retryWithProof`.
 */
export class UndeliveredPaymentError extends ProtocolError {
  /** The `X-PAYMENT` value that was sent. */
  readonly proof: string;
  readonly url: string;
  readonly method: string;
  readonly request: PaidRequest;
  /** Status of the last answer; undefined when the gateway could not be reached. */
  readonly status: number | undefined;
  /** The gateway's error code in the last answer (e.g. `upstream_error`). */
  readonly gatewayError: string | undefined;
  constructor(
    message: string,
    request: PaidRequest,
    last: { status?: number; gatewayError?: string },
    cause?: unknown,
  ) {
    super('payment_failed', message);
    if (cause !== undefined) this.cause = cause;
    this.request = request;
    this.proof = request.proof;
    this.url = request.url;
    this.method = request.method;
    this.status = last.status;
    this.gatewayError = last.gatewayError;
  }
}

interface Verdict {
  reason: string;
  gatewayError?: string;
  message?: string;
}

/**
 * Why a paid answer should be sent again, or null when it is final. A delivered answer
 * (a receipt that says success) is final whatever its body says: it is the upstream's.
 */
async function retryVerdict(res: Response): Promise<Verdict | null> {
  if (res.status < 400 || res.status === 402) return null; // a 402 refuses the proof: paying again is not ours to do
  if (deliveredReceipt(res)) return null;
  // Not JSON (null): a proxy in front of the gateway. Only its "try later" statuses are worth a retry.
  const body = await jsonObject(res);
  const { gatewayError, message, retryable } = gatewayErrorOf(body);
  if (retryable || (gatewayError && RETRY_CODES.has(gatewayError))) {
    return {
      reason: gatewayError ?? 'retryable',
      ...(gatewayError ? { gatewayError } : {}),
      ...(message ? { message } : {}),
    };
  }
  if (body === null && [502, 503, 504].includes(res.status)) return { reason: `http_${res.status}` };
  return null;
}

function deliveredReceipt(res: Response): boolean {
  const header = res.headers.get('x-payment-response');
  if (!header) return false;
  try {
    return decodePaymentReceipt(header).success;
  } catch {
    return false;
  }
}

/** `Retry-After` in ms: delta-seconds or an HTTP date; null when absent or unreadable. */
function retryAfterMs(res: Response, now = Date.now()): number | null {
  const v = res.headers.get('retry-after')?.trim();
  if (!v) return null;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const abort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
}

/**
 * Sends a paid request with its proof, and again while the answer says to retry with the
 * same proof (honouring `Retry-After`, at most `maxRetryDelayMs`). Pays nothing. Returns
 * the first final answer — the upstream's response, or a refusal such as a 402 — and
 * throws `UndeliveredPaymentError` (with the same request and proof) when it gives up.
 * If the caller's signal aborts, its reason is thrown as is; the proof is in `paid`.
 * @example
 * try {
 *   res = await pay(url, { method: 'POST', body });
 * } catch (e) {
 *   if (!(e instanceof UndeliveredPaymentError)) throw e;
 *   saved = e.request; // later, or in another process:
 *   res = await retryWithProof(fetch, saved);
 * }
 */
export async function retryWithProof(
  fetchImpl: (input: string, init: RequestInit) => Promise<Response>,
  paid: PaidRequest,
  opts: RetryOptions = {},
): Promise<Response> {
  const maxRetries = opts.maxRetries ?? 8;
  const maxDelay = opts.maxRetryDelayMs ?? 5000;
  const { signal } = opts;
  const send = () =>
    fetchImpl(paid.url, {
      method: paid.method,
      headers: { ...paid.headers, 'x-payment': paid.proof },
      body: paid.body,
      redirect: 'manual',
      signal: signal ?? null,
    });

  for (let attempt = 0; ; attempt++) {
    let res: Response | undefined;
    let verdict: Verdict | null;
    let failure: unknown;
    try {
      res = await send();
      verdict = await retryVerdict(res);
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      failure = e;
      verdict = { reason: 'unreachable' };
    }
    if (res && !verdict) return res;
    const why = verdict as Verdict;
    if (attempt >= maxRetries) {
      await res?.body?.cancel().catch(() => {});
      const last = res
        ? `the gateway still answers ${res.status}${why.gatewayError ? ` ${why.gatewayError}` : ''}${why.message ? ` (${why.message})` : ''}`
        : `the gateway cannot be reached (${describe(failure)})`;
      throw new UndeliveredPaymentError(
        `paid, but not delivered after ${attempt + 1} attempt(s): ${last}. The payment stays good for this ` +
          `request: send the same request with the same X-PAYMENT later (retryWithProof, or \`tollgate retry\`)`,
        paid,
        {
          ...(res ? { status: res.status } : {}),
          ...(why.gatewayError ? { gatewayError: why.gatewayError } : {}),
        },
        failure,
      );
    }
    const delayMs = Math.min(maxDelay, (res && retryAfterMs(res)) ?? 250 * 2 ** (attempt + 1));
    opts.onEvent?.({ type: 'retry', attempt: attempt + 1, reason: why.reason, delayMs });
    await res?.body?.cancel().catch(() => {});
    await sleep(delayMs, signal);
  }
}

function describe(e: unknown): string {
  const err = e as Error | undefined;
  const cause = err?.cause as Error | undefined;
  return `${err?.message ?? String(e)}${cause?.message ? `: ${cause.message}` : ''}`;
}
