/**
 * Paying MCP tool calls (x402 MCP transport): wraps a connected `@modelcontextprotocol/sdk`
 * Client. A tool result with `isError` and an x402 `PaymentRequired` (structuredContent,
 * or JSON in content[0].text) is paid with the payer's wallets under the same limits as
 * payFetch (spend.ts: per-request and per-session caps, quote lifetime, network check),
 * using Tollgate's own option (`extensions.tollgate.paymentRequirement`, the SPEC
 * requirement), and the call is sent again with the proof in `_meta["x402/payment"]`.
 * While the gateway says the payment is still good but the call was not served
 * (`retryable`), the same proof is sent again; it never pays twice for one call. When
 * the retries give up it throws `UndeliveredToolCallError` carrying the proof.
 *
 * This module imports the SDK's types only: the caller brings its connected Client, and
 * payFetch users load none of the SDK.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type PaymentProof,
  type PaymentRequirement,
  ProtocolError,
  parsePaymentRequirement,
} from '@tollgate/protocol';
import { gatewayErrorOf, RETRY_CODES } from './error-body.ts';
import type { RetryEvent } from './paid-retry.ts';
import { createSpender, lifetimeLeft, type SpendEvent, type SpendOptions } from './spend.ts';

export const MCP_PAYMENT_META = 'x402/payment';
export const MCP_PAYMENT_RESPONSE_META = 'x402/payment-response';

export type McpPayEvent =
  | { type: 'challenge'; tool: string; requirement: PaymentRequirement }
  | { type: 'requote'; expiresAt: string }
  | SpendEvent
  | RetryEvent
  | { type: 'done'; tool: string; isError: boolean };

export interface McpPayOptions extends Omit<SpendOptions, 'onEvent'> {
  /** How many times to re-send the same proof while the result says `retryable` (default 8). */
  maxRetries?: number;
  /** Upper bound for one wait between retries, ms (default 5000). */
  maxRetryDelayMs?: number;
  onEvent?: (event: McpPayEvent) => void;
}

/** A tool result as the SDK returns it. */
export type ToolResult = Awaited<ReturnType<Client['callTool']>>;

type Json = Record<string, unknown>;
const isPlainObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Paid, not delivered (yet): send the same call with `payment` later (`retryToolCall`). */
export class UndeliveredToolCallError extends ProtocolError {
  readonly tool: string;
  readonly args: Json;
  /** The proof that was sent in `_meta["x402/payment"]`. */
  readonly payment: PaymentProof;
  /** The last result. */
  readonly result: ToolResult | undefined;
  constructor(message: string, tool: string, args: Json, payment: PaymentProof, result?: ToolResult) {
    super('payment_failed', message);
    this.tool = tool;
    this.args = args;
    this.payment = payment;
    this.result = result;
  }
}

/** The x402 PaymentRequired of a tool result, or null when the result asks for none. */
export function paymentRequiredOf(result: ToolResult): Json | null {
  if (result.isError !== true) return null;
  const isRequired = (v: unknown): v is Json =>
    isPlainObject(v) && typeof v.x402Version === 'number' && Array.isArray(v.accepts);
  if (isRequired(result.structuredContent)) return result.structuredContent;
  const first = (result.content as { type?: string; text?: string }[] | undefined)?.[0];
  if (first?.type !== 'text' || typeof first.text !== 'string') return null;
  try {
    const parsed: unknown = JSON.parse(first.text);
    return isRequired(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** The receipt of a paid tool result (`_meta["x402/payment-response"]`), if any. */
export function paymentResponseOf(result: ToolResult): Json | null {
  const r = (result._meta as Json | undefined)?.[MCP_PAYMENT_RESPONSE_META];
  return isPlainObject(r) ? r : null;
}

/** Why a paid result should be sent again with the same proof (null: it is final). */
function retryVerdict(result: ToolResult): { reason: string; delayMs: number | null } | null {
  if (result.isError !== true || paymentRequiredOf(result)) return null;
  if (paymentResponseOf(result)?.success === true) return null;
  const body = isPlainObject(result.structuredContent) ? result.structuredContent : null;
  const { gatewayError, retryable } = gatewayErrorOf(body);
  if (!retryable && !(gatewayError && RETRY_CODES.has(gatewayError))) return null;
  const http = (result._meta as Json | undefined)?.['tollgate/http'];
  const after = isPlainObject(http) && typeof http.retryAfter === 'number' ? http.retryAfter * 1000 : null;
  return { reason: gatewayError ?? 'retryable', delayMs: after };
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason);
    });
  });

export interface PayingMcpClient {
  /** Calls a tool, paying it if it asks; returns the final result (a refused payment's too). */
  callTool(name: string, args?: Json, opts?: { signal?: AbortSignal }): Promise<ToolResult>;
  /** Sends a call again with a payment already made (from an UndeliveredToolCallError). */
  retryToolCall(
    name: string,
    args: Json,
    payment: PaymentProof,
    opts?: { signal?: AbortSignal },
  ): Promise<ToolResult>;
  /** Every tool, all pages. */
  listTools(): Promise<Awaited<ReturnType<Client['listTools']>>['tools']>;
  /** Total paid so far, atomic USDC units. */
  readonly spent: bigint;
}

/**
 * @example
 * const client = new Client({ name: 'agent', version: '1.0.0' });
 * await client.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1:8402/mcp')));
 * const mcp = payingMcpClient(client, { wallets: [solanaWallet({ secretKey, rpcUrl })], maxPerRequest: '0.05' });
 * const result = await mcp.callTool('weather__get_forecast', { city: 'Oslo' });
 */
export function payingMcpClient(client: Client, opts: McpPayOptions): PayingMcpClient {
  const emit = (e: McpPayEvent) => opts.onEvent?.(e);
  const spender = createSpender({ ...opts, onEvent: emit });
  const maxRetries = opts.maxRetries ?? 8;
  const maxDelay = opts.maxRetryDelayMs ?? 5000;

  const call = (name: string, args: Json, payment?: PaymentProof, signal?: AbortSignal) =>
    client.callTool(
      { name, arguments: args, ...(payment ? { _meta: { [MCP_PAYMENT_META]: payment } } : {}) },
      undefined,
      signal ? { signal } : {},
    );

  /** The SPEC requirement inside a PaymentRequired, or null when only other schemes are offered. */
  const specOf = (required: Json): PaymentRequirement | null => {
    const ext = isPlainObject(required.extensions) ? required.extensions.tollgate : undefined;
    const spec = isPlainObject(ext) ? ext.paymentRequirement : undefined;
    return spec === undefined ? null : parsePaymentRequirement(spec);
  };

  async function withPayment(name: string, args: Json, payment: PaymentProof, signal?: AbortSignal) {
    for (let attempt = 0; ; attempt++) {
      const result = await call(name, args, payment, signal);
      const verdict = retryVerdict(result);
      if (!verdict) {
        emit({ type: 'done', tool: name, isError: result.isError === true });
        return result;
      }
      if (attempt >= maxRetries) {
        throw new UndeliveredToolCallError(
          `paid, but ${name} was not delivered after ${attempt + 1} attempt(s) (${verdict.reason}). The payment ` +
            'stays good for this call: send it again later with the same payment (retryToolCall)',
          name,
          args,
          payment,
          result,
        );
      }
      const delayMs = Math.min(maxDelay, verdict.delayMs ?? 250 * 2 ** (attempt + 1));
      emit({ type: 'retry', attempt: attempt + 1, reason: verdict.reason, delayMs });
      await sleep(delayMs, signal);
    }
  }

  return {
    get spent() {
      return spender.spent;
    },
    async callTool(name, args = {}, o = {}) {
      const quote = async () => {
        const result = await call(name, args, undefined, o.signal);
        const required = paymentRequiredOf(result);
        if (!required) return { result, spec: null };
        const spec = specOf(required);
        if (spec) emit({ type: 'challenge', tool: name, requirement: spec });
        return { result, spec };
      };
      let quoted = await quote();
      if (!quoted.spec) return quoted.result;
      if (lifetimeLeft(quoted.spec) < spender.minQuoteLifetimeMs) {
        emit({ type: 'requote', expiresAt: quoted.spec.expiresAt });
        quoted = await quote();
        if (!quoted.spec) return quoted.result;
      }
      const { proof } = await spender.pay(quoted.spec, o.signal);
      return withPayment(name, args, proof, o.signal);
    },
    retryToolCall: (name, args, payment, o = {}) => withPayment(name, args, payment, o.signal),
    async listTools() {
      const tools: Awaited<ReturnType<Client['listTools']>>['tools'] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {});
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    },
  };
}
