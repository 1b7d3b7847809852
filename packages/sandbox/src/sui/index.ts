/**
 * A local Sui chain for tests and sandbox mode: the real `SuiGrpcClient` talks to it over
 * loopback gRPC-web; a ledger simulator behind it verifies signatures, keeps coin
 * balances, rejects spent coin versions and can be told to fail or stall.
 *
 * @example
 * const sui = await startSuiSandbox();
 * sui.faucet(address, 5_000_000n); // 5 USDC and 10 SUI for gas
 * const client = new SuiGrpcClient({ network: 'localnet', baseUrl: sui.url });
 */
import type { AddressInfo } from 'node:net';
import { isValidSuiAddress, normalizeStructTag, normalizeSuiAddress } from '@mysten/sui/utils';
import { DEFAULT_FAUCET_MIST, OTHER_COIN_TYPE, SUI_COIN_TYPE, USDC_COIN_TYPE } from './constants.ts';
import type { SuiFault } from './grpc-web.ts';
import { createGrpcWebServer } from './grpc-web.ts';
import { SuiLedger } from './ledger.ts';
import { makeHandlers } from './rpc.ts';

export type { SuiFault } from './grpc-web.ts';

export interface SuiSandboxOptions {
  /** Default 0 (any free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** How long each answer is delayed under the 'slow' fault. Default 2000 ms. */
  slowMs?: number;
  /** Chain id reported by GetServiceInfo. Default: a fixed sandbox id (not mainnet's). */
  chainId?: string;
}

export interface SuiSandbox {
  /** gRPC-web base URL for `new SuiGrpcClient({ network: 'localnet', baseUrl: url })`. */
  readonly url: string;
  readonly network: 'localnet';
  readonly chainId: string;
  /** The real mainnet USDC coin type. */
  readonly coinType: string;
  /** A look-alike USDC (same module and name, 6 decimals, another package). */
  readonly otherCoinType: string;
  readonly suiCoinType: string;
  /** Gives `owner` a USDC coin of `usdcAtomic` (if > 0) and a SUI coin of `mist` (default 10 SUI). */
  faucet(
    owner: string,
    usdcAtomic: bigint,
    mist?: bigint,
  ): { usdcCoinId: string | null; suiCoinId: string | null };
  /** Gives `owner` a coin of the look-alike type. */
  mintOther(owner: string, atomic: bigint): string;
  /** Sum of `owner`'s coins of `coinType` (default USDC). */
  balance(owner: string, coinType?: string): bigint;
  /** `owner`'s USDC in atomic units (same shape as the Solana sandbox's). */
  usdcBalance(owner: string): Promise<bigint>;
  /**
   * 'rpc_down' answers HTTP 503, 'error_500' HTTP 500, 'slow' delays every answer,
   * 'not_found' makes GetTransaction answer NOT_FOUND, 'hold_finality' leaves new
   * transactions without a checkpoint until finalizeAll().
   */
  setFault(fault: SuiFault): void;
  finalizeAll(): void;
  close(): Promise<void>;
}

export async function startSuiSandbox(opts: SuiSandboxOptions = {}): Promise<SuiSandbox> {
  const ledger = new SuiLedger(opts.chainId);
  let fault: SuiFault = 'none';
  const server = createGrpcWebServer({
    handlers: makeHandlers(ledger, { chain: 'localnet', forceNotFound: () => fault === 'not_found' }),
    fault: () => fault,
    slowMs: opts.slowMs ?? 2000,
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const balance = (owner: string, coinType = USDC_COIN_TYPE) =>
    ledger.objects
      .ownedBy(normalizeSuiAddress(owner), normalizeStructTag(coinType))
      .reduce((s, c) => s + c.balance, 0n);

  return {
    url: `http://${urlHost}:${port}`,
    network: 'localnet',
    chainId: ledger.chainId,
    coinType: USDC_COIN_TYPE,
    otherCoinType: OTHER_COIN_TYPE,
    suiCoinType: SUI_COIN_TYPE,
    faucet(owner, usdcAtomic, mist = DEFAULT_FAUCET_MIST) {
      checkAddress(owner);
      return {
        usdcCoinId: usdcAtomic > 0n ? ledger.mint(owner, USDC_COIN_TYPE, usdcAtomic).id : null,
        suiCoinId: mist > 0n ? ledger.mint(owner, SUI_COIN_TYPE, mist).id : null,
      };
    },
    mintOther(owner, atomic) {
      checkAddress(owner);
      return ledger.mint(owner, OTHER_COIN_TYPE, atomic).id;
    },
    balance,
    async usdcBalance(owner) {
      return balance(owner);
    },
    setFault(f) {
      fault = f;
      ledger.holdFinality = f === 'hold_finality';
    },
    finalizeAll() {
      ledger.finalizeAll();
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function checkAddress(owner: string): void {
  if (!/^0x[0-9a-fA-F]{1,64}$/.test(owner) || !isValidSuiAddress(normalizeSuiAddress(owner))) {
    throw new Error(`not a Sui address: ${owner}`);
  }
}
