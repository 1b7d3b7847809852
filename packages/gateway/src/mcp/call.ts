/**
 * A paid MCP tool call (x402 transport for MCP, specs/transports-v2/mcp.md): the call
 * becomes the HTTP request it stands for (tool-input.ts) and is served by the
 * gateway's own route, so settlement (payments/settle.ts) sees the very request facts
 * an HTTP caller's request would have: one tool call is one paid request, exactly once,
 * replayed for the same payment, retryable with the payment kept, and on the v2 path
 * charged only once the answer is in hand. This module only translates:
 * `_meta["x402/payment"]` → `PAYMENT-SIGNATURE` (x402 v2 payload) or `X-PAYMENT`
 * (a Tollgate SPEC proof, x402Version 1); a 402 → a tool result with `isError: true` and
 * the v2 `PaymentRequired` (its `exact` entries, Tollgate's split options as
 * `exact_split` entries, the SPEC requirement in `extensions.tollgate`); a receipt →
 * `_meta["x402/payment-response"]`.
 */
import {
  decodePaymentReceipt,
  decodePaymentRequired,
  decodeSettleResponse,
  encodeBase64Json,
  type PaymentRequirement,
  parseAmount,
  type V2PaymentRequired,
  type V2Requirements,
  type V2SettleResponse,
} from '@tollgate/protocol';
import type { V2Schemes } from '../payments/v2-offer.ts';
import { argumentProblem, requestParts } from './tool-input.ts';
import type { Json, McpTool } from './tools.ts';

export const PAYMENT_META = 'x402/payment';
export const PAYMENT_RESPONSE_META = 'x402/payment-response';

/** The HTTP request a tool call stands for, as the gateway's route receives it. */
export interface HttpCall {
  method: string;
  /** Path and query. */
  url: string;
  headers: Record<string, string>;
  body: Buffer | null;
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: Buffer;
}

/** Serves an HTTP call through the gateway's routes (http/mcp.ts). */
export type Invoke = (call: HttpCall) => Promise<HttpAnswer>;

export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  isError?: boolean;
  structuredContent?: Json;
  _meta?: Json;
}

export interface CallContext {
  invoke: Invoke;
  v2Schemes?: V2Schemes;
}

const isPlainObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** An error result whose structured content is a gateway-style error body. */
export function errorResult(error: string, message: string, extra: Json = {}, meta?: Json): ToolResult {
  const body = { error, message, ...extra };
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body,
    ...(meta ? { _meta: meta } : {}),
  };
}

export async function callTool(
  ctx: CallContext,
  tool: McpTool,
  args: Json,
  meta: Json | undefined,
): Promise<ToolResult> {
  const problem = argumentProblem(tool.target.input, args);
  if (problem) {
    return errorResult('invalid_request', `the arguments do not fit the tool's inputSchema: ${problem}`, {
      reason: 'invalid_arguments',
    });
  }
  const payment = meta?.[PAYMENT_META];
  const paymentHeaders: Record<string, string> = {};
  if (payment !== undefined) {
    const version = isPlainObject(payment) ? payment.x402Version : undefined;
    if (version !== 1 && version !== 2) {
      return errorResult(
        'invalid_payment_header',
        '_meta["x402/payment"] must be an x402 v2 PaymentPayload (x402Version 2) or a Tollgate proof (x402Version 1)',
      );
    }
    paymentHeaders[version === 2 ? 'payment-signature' : 'x-payment'] = encodeBase64Json(payment);
  }
  const call = httpCall(tool, args);
  const answer = await ctx.invoke({ ...call, headers: { ...call.headers, ...paymentHeaders } });
  const delivered = receiptOf(answer, ctx.v2Schemes);
  if (answer.status === 402 && !delivered?.success) {
    const spec = specRequirement(answer.body);
    if (spec) return paymentRequired(tool, spec, answer, delivered, ctx.v2Schemes);
    // Refused after the answer was in hand (a v2 payment that did not settle): nothing
    // was charged; a fresh requirement lets the payer pay again.
    const fresh = payment === undefined ? null : await ctx.invoke(call);
    const freshSpec = fresh?.status === 402 ? specRequirement(fresh.body) : null;
    const failure = jsonBody(answer.body);
    if (fresh && freshSpec) {
      const why = typeof failure?.message === 'string' ? failure.message : 'the payment could not be settled';
      return paymentRequired(tool, freshSpec, fresh, delivered, ctx.v2Schemes, why);
    }
  }
  return answerResult(tool, answer, delivered);
}

/** The route a tool call is served by, with its query and body. */
export function httpCall(tool: McpTool, args: Json): HttpCall {
  const { query, body } = requestParts(tool.target.input, args);
  const t = tool.target;
  const path =
    t.kind === 'endpoint'
      ? `/p/${t.slug}${t.endpoint.path ? `/${t.endpoint.path}` : ''}`
      : t.kind === 'chat'
        ? '/v1/chat/completions'
        : '/v1/embeddings';
  return {
    method: t.kind === 'endpoint' ? t.endpoint.method.toUpperCase() : 'POST',
    url: query ? `${path}?${query}` : path,
    headers: body ? { 'content-type': 'application/json' } : {},
    body,
  };
}

function header(a: HttpAnswer, name: string): string | undefined {
  const v = a.headers[name];
  return Array.isArray(v) ? v[0] : v === undefined ? undefined : String(v);
}

function jsonBody(body: Buffer): Json | null {
  try {
    const v = JSON.parse(body.toString('utf8'));
    return isPlainObject(v) ? v : null;
  } catch {
    return null;
  }
}

function specRequirement(body: Buffer): PaymentRequirement | null {
  const b = jsonBody(body);
  return b &&
    b.error === 'payment_required' &&
    Array.isArray(b.accepts) &&
    typeof b.paymentRequirementId === 'string'
    ? (b as unknown as PaymentRequirement)
    : null;
}

/** CAIP-2 of a chain's network: the v2 scheme's when it is on that network, else `<chain>:<network>`. */
function caip2(chain: 'sui' | 'solana', network: string, schemes: V2Schemes | undefined): string {
  const s = schemes?.[chain];
  return s && s.network === network ? s.caip2 : `${chain}:${network}`;
}

/** The answer's receipt as an x402 v2 SettlementResponse (a SPEC receipt is mapped onto one). */
function receiptOf(a: HttpAnswer, schemes: V2Schemes | undefined): (V2SettleResponse & Json) | null {
  try {
    const v2 = header(a, 'payment-response');
    if (v2) return decodeSettleResponse(v2) as V2SettleResponse & Json;
    const v1 = header(a, 'x-payment-response');
    if (!v1) return null;
    const r = decodePaymentReceipt(v1);
    return {
      success: r.success,
      transaction: r.txHashOrDigest,
      network: caip2(r.chain, r.network, schemes),
      payer: r.payer,
      chain: r.chain,
      paymentRequirementId: r.paymentRequirementId,
    };
  } catch {
    return null;
  }
}

/** Tollgate's own options as v2 `accepts` entries: pay every split in one transaction, then send the SPEC proof. */
function splitEntries(
  spec: PaymentRequirement,
  schemes: V2Schemes | undefined,
  nowMs: number,
): V2Requirements[] {
  const left = Math.max(0, Math.floor((Date.parse(spec.expiresAt) - nowMs) / 1000));
  return spec.accepts.map((o) => ({
    scheme: 'exact_split',
    network: caip2(o.chain, o.network, schemes),
    amount: parseAmount(o.totalAmount, o.decimals).toString(),
    asset: o.chain === 'sui' ? (o.coinType ?? '') : (o.mint ?? ''),
    payTo: o.splits[0]?.payTo ?? '',
    maxTimeoutSeconds: left,
    extra: {
      specScheme: spec.scheme,
      chain: o.chain,
      network: o.network,
      splits: o.splits,
      memo: o.memo,
      paymentRequirementId: spec.paymentRequirementId,
      nonce: spec.nonce,
      requestHash: spec.requestHash,
      expiresAt: spec.expiresAt,
    },
  }));
}

function paymentRequired(
  tool: McpTool,
  spec: PaymentRequirement & { reason?: string; message?: string },
  answer: HttpAnswer,
  failed: Json | null,
  schemes: V2Schemes | undefined,
  why?: string,
): ToolResult {
  let v2: V2PaymentRequired | null = null;
  try {
    const h = header(answer, 'payment-required');
    if (h) v2 = decodePaymentRequired(h);
  } catch {
    v2 = null;
  }
  const reason =
    why ?? (spec.reason ? `${spec.reason}${spec.message ? `: ${spec.message}` : ''}` : undefined);
  const { requestId: _id, ...specBody } = spec as PaymentRequirement & { requestId?: string };
  const required: Json = {
    x402Version: 2,
    error: reason ?? 'payment_required',
    resource: { url: `mcp://tool/${tool.name}`, description: spec.description, mimeType: 'application/json' },
    accepts: [...(v2?.accepts ?? []), ...splitEntries(spec, schemes, Date.now())],
    extensions: { ...(v2?.extensions ?? {}), tollgate: { paymentRequirement: specBody } },
  };
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(required) }],
    structuredContent: required,
    ...(failed ? { _meta: { [PAYMENT_RESPONSE_META]: failed } } : {}),
  };
}

/** A delivered answer (or an error that ends the call) as a tool result. */
function answerResult(tool: McpTool, answer: HttpAnswer, receipt: Json | null): ToolResult {
  const json = jsonBody(answer.body);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(answer.body);
  } catch {
    text = `(binary answer, base64) ${answer.body.toString('base64')}`;
  }
  // A chat answer reads best as the assistant's words; the whole completion is structured.
  if (tool.target.kind === 'chat' && json && answer.status < 400) {
    const first = (json.choices as { message?: { content?: unknown } }[] | undefined)?.[0];
    if (typeof first?.message?.content === 'string') text = first.message.content;
  }
  const retryAfter = header(answer, 'retry-after');
  const http: Json = {
    status: answer.status,
    ...(retryAfter ? { retryAfter: Number(retryAfter) } : {}),
    ...(header(answer, 'x-tollgate-replay') === 'true' ? { replay: true } : {}),
  };
  return {
    ...(answer.status >= 400 ? { isError: true } : {}),
    content: [{ type: 'text', text }],
    ...(json ? { structuredContent: json } : {}),
    _meta: { ...(receipt ? { [PAYMENT_RESPONSE_META]: receipt } : {}), 'tollgate/http': http },
  };
}
