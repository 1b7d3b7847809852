import { withDeadline } from '../deadline.ts';
import { type ChainId, ChainUnavailableError } from './chain.ts';

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
