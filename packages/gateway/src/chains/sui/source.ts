/**
 * The Sui TransactionSource: one `getTransaction` over gRPC through the official
 * SuiGrpcClient, then the pure normaliser. Not found -> null; every other failure
 * (network, timeout, node error, wrong chain, malformed answer) -> ChainUnavailableError.
 */
import { TransactionError } from '@mysten/sui/client';
import { GrpcStatusCode, RpcError, SuiGrpcClient } from '@mysten/sui/grpc';
import { isValidTransactionDigest, normalizeStructTag } from '@mysten/sui/utils';
/** Chain id (genesis checkpoint digest) that GetServiceInfo reports on Sui mainnet. */
import { SUI_MAINNET_CHAIN_ID } from '@tollgate/protocol';
import { withDeadline } from '../../deadline.ts';
import type { ObservedTransaction, TransactionSource } from '../chain.ts';
import { ChainUnavailableError } from '../chain.ts';
import type { SuiTransactionResult } from './normalise.ts';
import { normaliseSuiTransaction } from './normalise.ts';

export { SUI_MAINNET_CHAIN_ID };

const INCLUDE = { balanceChanges: true, effects: true, bcs: true } as const;

/** The slice of SuiGrpcClient the source uses, so tests can pass their own. */
export interface SuiReadClient {
  core: {
    getTransaction(opts: { digest: string; include: typeof INCLUDE; signal?: AbortSignal }): Promise<unknown>;
    getChainIdentifier(opts?: { signal?: AbortSignal }): Promise<{ chainIdentifier: string }>;
  };
}

export interface SuiSourceOptions {
  /** gRPC(-web) base URL of a full node, e.g. `https://fullnode.mainnet.sui.io:443`. */
  rpcUrl: string;
  /** `mainnet`, or `localnet` for the sandbox chain. */
  network: string;
  /** Per lookup. Default 10 s. */
  timeoutMs?: number;
  /**
   * The node must report this chain id, so a gateway on `mainnet` never accepts payments
   * made on another chain by a misconfigured URL. Default: mainnet's id when `network` is
   * `mainnet`, otherwise no check.
   */
  expectedChainId?: string;
  client?: SuiReadClient;
}

/** A digest that is not 32 bytes of base58 names no transaction on any chain. */
function isDigest(digest: unknown): digest is string {
  return typeof digest === 'string' && isValidTransactionDigest(digest);
}

function isNotFound(e: unknown): boolean {
  if (e instanceof TransactionError && e.reason === 'notFound') return true;
  return e instanceof RpcError && e.code === GrpcStatusCode[GrpcStatusCode.NOT_FOUND];
}

function describe(e: unknown): string {
  if (e instanceof RpcError) return `${e.code}: ${e.message}`;
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

export function createSuiSource(opts: SuiSourceOptions): TransactionSource {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const client: SuiReadClient =
    opts.client ?? new SuiGrpcClient({ network: opts.network, baseUrl: opts.rpcUrl });
  const expectedChainId =
    opts.expectedChainId ?? (opts.network === 'mainnet' ? SUI_MAINNET_CHAIN_ID : undefined);
  let chainChecked = false;

  async function checkChain(signal: AbortSignal): Promise<void> {
    if (!expectedChainId || chainChecked) return;
    const { chainIdentifier } = await client.core.getChainIdentifier({ signal });
    if (chainIdentifier !== expectedChainId) {
      throw new ChainUnavailableError(
        'sui',
        `the Sui node at ${opts.rpcUrl} is on chain ${chainIdentifier}, not ${expectedChainId} (${opts.network})`,
      );
    }
    chainChecked = true;
  }

  return {
    chain: 'sui',
    network: opts.network,
    wellFormed: isDigest,
    async fetch(digest: string): Promise<ObservedTransaction | null> {
      if (!isDigest(digest)) return null;
      let result: unknown;
      try {
        result = await withDeadline(timeoutMs, async (signal) => {
          await checkChain(signal);
          return client.core.getTransaction({ digest, include: INCLUDE, signal });
        });
      } catch (e) {
        if (e instanceof ChainUnavailableError) throw e;
        if (isNotFound(e)) return null;
        throw new ChainUnavailableError('sui', `Sui getTransaction failed: ${describe(e)}`, { cause: e });
      }
      let tx: ObservedTransaction;
      try {
        tx = normaliseSuiTransaction(result as SuiTransactionResult);
      } catch (e) {
        if (e instanceof ChainUnavailableError) throw e;
        throw new ChainUnavailableError('sui', `unreadable Sui transaction: ${describe(e)}`, { cause: e });
      }
      if (tx.id !== digest)
        throw new ChainUnavailableError('sui', `the node answered ${tx.id} for ${digest}`);
      return tx;
    },
    sameAsset(a: string, b: string): boolean {
      try {
        return normalizeStructTag(a) === normalizeStructTag(b);
      } catch {
        return false;
      }
    },
  };
}
