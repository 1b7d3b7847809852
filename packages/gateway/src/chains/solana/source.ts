/**
 * The Solana adapter: fetch a transaction over JSON-RPC (rpc.ts: one keep-alive pool,
 * a plain parse) and normalise it. Anything that goes wrong talking to the node is a
 * ChainUnavailableError, never a verdict.
 */
import type { Signature } from '@solana/kit';
import { SOLANA_MAINNET_GENESIS_HASH, USDC_SOLANA_MINT } from '@tollgate/protocol';
import type { ObservedTransaction, TransactionSource } from '../chain.ts';
import { ChainUnavailableError } from '../chain.ts';
import { askChain } from '../deadline.ts';
import { normaliseSolanaTransaction } from './normalise.ts';
import { createJsonRpc } from './rpc.ts';
import { isSolanaSignature } from './signature.ts';

export interface SolanaSourceOptions {
  rpcUrl: string;
  /** Label used in accept options and proofs: `mainnet`, `localnet`, ... */
  network: string;
  /** The commitment a payment must reach to count (DESIGN §4.4). Default `confirmed`. */
  commitment?: 'confirmed' | 'finalized';
  /** Per RPC call. Default 10 s. */
  timeoutMs?: number;
  /**
   * The only mint this source vouches for (default: mainnet USDC). Asset movements are
   * attributed for this mint, so any other offered asset compares as different.
   */
  mint?: string;
  /**
   * The node must report this genesis hash, so a gateway on `mainnet` never accepts
   * payments made on a local validator that cloned the USDC mint. Default: mainnet's
   * when `network` is `mainnet`, otherwise no check.
   */
  expectedGenesisHash?: string;
}

export { SOLANA_MAINNET_GENESIS_HASH };

const DEFAULT_TIMEOUT_MS = 10_000;

/** A proof field must never make us throw: anything but a 64-byte base58 string is no signature. */
function isSignatureString(value: unknown): value is Signature {
  return isSolanaSignature(value);
}

function notFinal(id: string, err: unknown): ObservedTransaction {
  // decide() stops at `final: false`; the rest only has to be well-formed.
  return {
    id,
    final: false,
    success: err === null,
    timeMs: null,
    signers: [],
    assetAuthorities: [],
    deltas: [],
    memos: [],
  };
}

export function createSolanaSource(opts: SolanaSourceOptions): TransactionSource {
  const rpc = createJsonRpc(opts.rpcUrl);
  const commitment = opts.commitment ?? 'confirmed';
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const mint = opts.mint ?? USDC_SOLANA_MINT;
  const expectedGenesisHash =
    opts.expectedGenesisHash ?? (opts.network === 'mainnet' ? SOLANA_MAINNET_GENESIS_HASH : undefined);
  let chainChecked = false;

  const ask = <T>(what: string, call: (signal: AbortSignal) => Promise<T>): Promise<T> =>
    askChain('solana', what, timeoutMs, call);

  return {
    chain: 'solana',
    network: opts.network,
    sameAsset: (a, b) => a === b && a === mint,
    wellFormed: isSignatureString,
    async fetch(txHashOrDigest) {
      // Not a 64-byte base58 signature: no chain can have it.
      if (!isSignatureString(txHashOrDigest)) return null;
      const sig = txHashOrDigest;

      if (expectedGenesisHash && !chainChecked) {
        const genesis = await ask('getGenesisHash', (signal) => rpc.call('getGenesisHash', [], signal));
        if (genesis !== expectedGenesisHash) {
          throw new ChainUnavailableError(
            'solana',
            `the Solana node at ${opts.rpcUrl} has genesis ${String(genesis)}, not ${expectedGenesisHash} (${opts.network})`,
          );
        }
        chainChecked = true;
      }

      const tx = await ask('getTransaction', (signal) =>
        rpc.call(
          'getTransaction',
          [sig, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0, commitment }],
          signal,
        ),
      );
      if (tx !== null) {
        try {
          return normaliseSolanaTransaction(tx, { signature: sig, final: true, mint });
        } catch (e) {
          throw new ChainUnavailableError(
            'solana',
            `malformed getTransaction answer: ${(e as Error).message}`,
            {
              cause: e,
            },
          );
        }
      }

      // null = unknown, or known below the required commitment (or not yet indexed): ask the status.
      const statuses = await ask('getSignatureStatuses', (signal) =>
        rpc.call('getSignatureStatuses', [[sig], { searchTransactionHistory: true }], signal),
      );
      const value: unknown = (statuses as { value?: unknown } | null)?.value;
      if (!Array.isArray(value)) {
        throw new ChainUnavailableError('solana', 'malformed getSignatureStatuses answer: no value list');
      }
      const status: unknown = value[0];
      if (status === null || status === undefined) return null;
      if (typeof status !== 'object' || !('err' in status)) {
        throw new ChainUnavailableError('solana', 'malformed getSignatureStatuses answer: no err field');
      }
      return notFinal(sig, status.err);
    },
  };
}
