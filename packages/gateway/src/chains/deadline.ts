import { type ChainId, ChainUnavailableError } from './chain.ts';

/**
 * A deadline for one chain call. `AbortSignal.timeout(ms)` keeps its timer for the whole
 * `ms` after the call answered (10 s per verification RPC: thousands of them pending under
 * load, each outliving the young generation); this one's timer goes when the call settles. It aborts the same way: a `TimeoutError` DOMException as the reason.
 */
export async function withDeadline<T>(ms: number, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    ms,
  );
  // As AbortSignal.timeout's: a pending deadline alone does not keep the process alive.
  timer.unref();
  try {
    return await call(controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One call to a chain's node under a deadline; any failure (the node's error, the deadline,
 * the network) is a retryable ChainUnavailableError naming `what`.
 */
export async function askChain<T>(
  chain: ChainId,
  what: string,
  ms: number,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  try {
    return await withDeadline(ms, call);
  } catch (e) {
    throw new ChainUnavailableError(chain, `${what} failed: ${(e as Error)?.message ?? String(e)}`, {
      cause: e,
    });
  }
}
