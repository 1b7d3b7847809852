/**
 * A lean JSON-RPC client for the few calls verification makes. @solana/kit's transport
 * went through the global fetch and parsed every answer with a BigInt-preserving reviver
 * over the whole document (0.3–0.45 ms of CPU per getTransaction on the bench VM). Here
 * one keep-alive undici Pool per node carries the calls, and the answer is a plain
 * JSON.parse: the normalizer reads only small integers (account indexes, blockTime) and
 * amounts the node sends as decimal strings, so no integer it uses can lose precision
 * (an unsafe one is refused by its checks, never rounded into a verdict).
 */
import { type Dispatcher, Pool } from 'undici';

export interface JsonRpc {
  /** The call's `result`; throws on a transport failure, a non-200 answer or a JSON-RPC error. */
  call(method: string, params: unknown[], signal: AbortSignal): Promise<unknown>;
}

export class JsonRpcError extends Error {
  override readonly name = 'JsonRpcError';
}

/** The `result` of one JSON-RPC answer (text as received). */
export function parseRpcAnswer(text: string): unknown {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new JsonRpcError('the answer is not JSON');
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
    throw new JsonRpcError('the answer is not a JSON-RPC object');
  }
  const { error, result } = answer as { error?: unknown; result?: unknown };
  if (error !== undefined && error !== null) {
    const e = error as { code?: unknown; message?: unknown };
    throw new JsonRpcError(`JSON-RPC error ${String(e.code)}: ${String(e.message)}`);
  }
  if (!('result' in answer)) throw new JsonRpcError('the answer has no result');
  return result;
}

/** The most of an answer a call reads: getTransaction answers are a few kilobytes. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/**
 * One call's exchange, over undici's dispatch API. undici's `request` API was used before:
 * with it the caller's whole state (the paid request, the chain's answer) outlived two
 * scavenges and was promoted, so the paid path filled the old generation (docs/performance.md,
 * thirteenth session; rpc's test measures it). The signal ends the exchange at any point.
 */
class Exchange {
  private controller: Dispatcher.DispatchController | null = null;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private status = 0;
  private readonly signal: AbortSignal;
  private readonly maxBytes: number;
  private readonly resolve: (text: string) => void;
  private readonly reject: (err: unknown) => void;

  constructor(
    signal: AbortSignal,
    maxBytes: number,
    resolve: (text: string) => void,
    reject: (err: unknown) => void,
  ) {
    this.signal = signal;
    this.maxBytes = maxBytes;
    this.resolve = resolve;
    this.reject = reject;
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** The signal aborted: a started exchange ends now, a queued one as it starts. */
  private readonly onAbort = (): void => {
    this.controller?.abort(this.signal.reason as Error);
  };

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.signal.aborted) controller.abort(this.signal.reason as Error);
    else this.controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    if (statusCode < 200) return; // an informational answer; the final one follows
    this.status = statusCode;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      controller.abort(new JsonRpcError(`the answer is larger than ${this.maxBytes} bytes`));
      return;
    }
    // Any other answer than 200 is read to its end and dropped: the connection stays usable.
    if (this.status === 200) this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.signal.removeEventListener('abort', this.onAbort);
    if (this.status !== 200) {
      this.reject(new JsonRpcError(`HTTP ${this.status}`));
      return;
    }
    const { chunks } = this;
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    this.resolve(body.toString('utf8'));
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: unknown): void {
    this.signal.removeEventListener('abort', this.onAbort);
    this.reject(err);
  }
}

export function createJsonRpc(rpcUrl: string, opts: { maxAnswerBytes?: number } = {}): JsonRpc {
  const url = new URL(rpcUrl);
  const path = `${url.pathname}${url.search}`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (url.username || url.password) {
    headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  }
  const maxBytes = opts.maxAnswerBytes ?? MAX_ANSWER_BYTES;
  // Made on first use: a verifier built but never asked opens nothing.
  let pool: Pool | null = null;
  let nextId = 0;
  return {
    async call(method, params, signal) {
      if (signal.aborted) throw signal.reason;
      // undici's own headers and body timers are off: every call has its deadline through
      // `signal` (source.ts askChain); armed per request, they died in the old generation.
      pool ??= new Pool(url.origin, { keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });
      const body = JSON.stringify({ jsonrpc: '2.0', id: ++nextId, method, params });
      const dispatcher = pool;
      const text = await new Promise<string>((resolve, reject) => {
        const exchange = new Exchange(signal, maxBytes, resolve, reject);
        try {
          dispatcher.dispatch({ path, method: 'POST', headers, body }, exchange);
        } catch (err) {
          exchange.onResponseError(null, err);
        }
      });
      return parseRpcAnswer(text);
    },
  };
}
