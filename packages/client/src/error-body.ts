/**
 * Reading the gateway's error bodies (internal: not exported by the package). Two
 * shapes (docs/errors.md): Tollgate's `{ error: code, message, retryable, … }`, and the
 * OpenAI envelope `{ error: { message, type, code, param, retryable, … }, retryable }`
 * of the OpenAI-style /v1 routes.
 */

/**
 * Codes that mean "nothing was consumed or delivered; the same proof works later": a paid
 * request (paid-retry.ts) or a paid MCP tool call (mcp.ts) is sent again with the same proof.
 */
export const RETRY_CODES: ReadonlySet<string> = new Set([
  'payment_pending',
  'payment_in_progress',
  'verification_unavailable',
  'service_unavailable',
  'rate_limited',
]);

export type ErrorJson = { error?: unknown; message?: unknown; retryable?: unknown; [k: string]: unknown };

/** The code, message, `retryable` and the object holding the other fields, in either shape. */
export function gatewayErrorOf(body: ErrorJson | null): {
  gatewayError?: string;
  message?: string;
  retryable: boolean;
  fields: ErrorJson | null;
} {
  const e = body?.error;
  const fields = typeof e === 'object' && e !== null ? (e as ErrorJson) : body;
  const code = typeof e === 'string' ? e : fields?.code;
  return {
    ...(typeof code === 'string' ? { gatewayError: code } : {}),
    ...(typeof fields?.message === 'string' ? { message: fields.message } : {}),
    retryable: body?.retryable === true || fields?.retryable === true,
    fields,
  };
}

/** The JSON object of a response body (read from a clone), or null when it is not one. */
export async function jsonObject(res: Response): Promise<ErrorJson | null> {
  try {
    const value: unknown = await res.clone().json();
    return typeof value === 'object' && value !== null ? (value as ErrorJson) : null;
  } catch {
    return null;
  }
}
