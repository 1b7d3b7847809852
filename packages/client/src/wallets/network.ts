/**
 * Which network a wallet's node is on. Solana nodes answer `getGenesisHash`, Sui nodes
 * their chain id; only mainnet's are known constants, so the rule is: an option on
 * `mainnet` needs a node with mainnet's identity, and an option on any other network
 * needs a node without it. A payment sent to the wrong network is money lost.
 */
import type { AcceptOption, Chain } from '@tollgate/protocol';
import { ProtocolError, SOLANA_MAINNET_GENESIS_HASH, SUI_MAINNET_CHAIN_ID } from '@tollgate/protocol';

const MAINNET_IDENTITY: Record<Chain, string> = {
  solana: SOLANA_MAINNET_GENESIS_HASH,
  sui: SUI_MAINNET_CHAIN_ID,
};

/** How long one identity question may take before the answer is treated as a failure. */
const IDENTITY_TIMEOUT_MS = 15_000;

/**
 * Throws `network_mismatch` unless a node with `identity` can pay `option`. `node` names
 * the node in the message, e.g. "the node at https://…".
 */
export function assertNetwork(
  option: Pick<AcceptOption, 'chain' | 'network'>,
  identity: string,
  node: string,
): void {
  const onMainnet = identity === MAINNET_IDENTITY[option.chain];
  if (onMainnet === (option.network === 'mainnet')) return;
  const what = option.chain === 'solana' ? 'genesis hash' : 'chain id';
  throw new ProtocolError(
    'network_mismatch',
    onMainnet
      ? `the option is on ${option.chain} ${option.network}, but ${node} is on mainnet; nothing was paid`
      : `the option is on ${option.chain} mainnet, but ${node} is not (its ${what} is ${identity}); nothing was paid`,
  );
}

/**
 * Memoises a node's identity: asked once, kept for the life of the wallet. A failed
 * question is not kept, so the next call asks again. A caller's signal stops its own
 * wait, not the shared question.
 * @example
 * const chainIdentity = cachedIdentity((signal) => rpc.getGenesisHash().send({ abortSignal: signal }));
 */
export function cachedIdentity(
  ask: (signal: AbortSignal) => Promise<string>,
): (opts?: { signal?: AbortSignal }) => Promise<string> {
  let cached: Promise<string> | undefined;
  return (opts = {}) => {
    if (!cached) {
      const asking = ask(AbortSignal.timeout(IDENTITY_TIMEOUT_MS));
      cached = asking;
      asking.catch(() => {
        if (cached === asking) cached = undefined;
      });
    }
    return opts.signal ? untilAborted(cached, opts.signal) : cached;
  };
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
