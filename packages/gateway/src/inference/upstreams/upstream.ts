/**
 * The port every inference upstream implements (an OpenAI-compatible HTTP server or
 * a local model). Expected failures are values; only a stream that breaks while
 * being read throws (UpstreamCut), because by then the result was already handed out.
 */
export type Json = Record<string, unknown>;

/** The upstream could not serve the call; the payment goes back to the caller for a retry. */
export interface UpstreamFailure {
  ok: false;
  kind: 'failed';
  error: 'upstream_error' | 'upstream_timeout';
  /** snake_case detail: connect_failed, timeout, status_503, bad_response, … */
  reason: string;
  status?: number;
}

/** The upstream refused the request itself (400/413/422): delivered to the caller as it is. */
export interface UpstreamRejected {
  ok: false;
  kind: 'rejected';
  status: number;
  body: Json;
}

export type UpstreamResult<T> = { ok: true; value: T } | UpstreamFailure | UpstreamRejected;

/** Thrown while iterating a stream that ended without `[DONE]` or carried an error event. */
export class UpstreamCut extends Error {
  override readonly name = 'UpstreamCut';
  readonly reason: string;
  constructor(reason: string, message = `the upstream stream broke: ${reason}`) {
    super(message);
    this.reason = reason;
  }
}

export interface ChatUpstream {
  /** A `chat.completion` object. */
  complete(body: Json, signal: AbortSignal): Promise<UpstreamResult<Json>>;
  /** `chat.completion.chunk` objects; ends normally only after the upstream's `[DONE]`. */
  stream(body: Json, signal: AbortSignal): Promise<UpstreamResult<AsyncIterable<Json>>>;
}

export interface EmbeddingsUpstream {
  /** An embeddings list object `{ object: 'list', data, model, usage }`. */
  embed(body: Json, signal: AbortSignal): Promise<UpstreamResult<Json>>;
}

export const failed = (
  error: UpstreamFailure['error'],
  reason: string,
  status?: number,
): UpstreamFailure => ({
  ok: false,
  kind: 'failed',
  error,
  reason,
  ...(status !== undefined ? { status } : {}),
});
