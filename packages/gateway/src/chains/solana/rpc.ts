/**
 * A lean JSON-RPC client for the few calls verification makes. @solana/kit's transport
 * went through the global fetch and parsed every answer with a BigInt-preserving reviver
 * over the whole document (0.3–0.45 ms of CPU per getTransaction on the bench VM). Here
 * one keep-alive undici Pool per node carries the calls, and the answer is a plain
 * JSON.parse: the normalizer reads only small integers (account indexes, blockTime) and
 * amounts the node sends as decimal strings, so no integer it uses can lose precision
 * (an unsafe one is refused by its checks, never rounded into a verdict).
 */
import { Pool } from 'undici';

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

export function createJsonRpc(rpcUrl: string): JsonRpc {
  const url = new URL(rpcUrl);
  const path = `${url.pathname}${url.search}`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (url.username || url.password) {
    headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  }
  // Made on first use: a verifier built but never asked opens nothing.
  let pool: Pool | null = null;
  let nextId = 0;
  return {
    async call(method, params, signal) {
      // undici's own headers and body timers are off: every call has its deadline through
      // `signal` (source.ts askChain); armed per request, they died in the old generation.
      pool ??= new Pool(url.origin, { keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });
      const body = JSON.stringify({ jsonrpc: '2.0', id: ++nextId, method, params });
      const res = await pool.request({ path, method: 'POST', headers, body, signal });
      if (res.statusCode !== 200) {
        await res.body.dump().catch(() => {});
        throw new JsonRpcError(`HTTP ${res.statusCode}`);
      }
      return parseRpcAnswer(await res.body.text());
    },
  };
}
