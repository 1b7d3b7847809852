/**
 * A local Solana chain for sandbox mode and tests: a loopback JSON-RPC server that
 * `@solana/kit`'s `createSolanaRpc` talks to, backed by litesvm running the real SPL
 * Token program, with USDC at the real mainnet mint address.
 *
 * @example
 * const chain = await startSolanaSandbox();
 * await chain.faucet(payerAddress, 5_000_000n); // 5 USDC + 1 SOL
 * const rpc = createSolanaRpc(chain.url);
 * // ...
 * await chain.close();
 */
import { createHash } from 'node:crypto';
import type { Address } from '@solana/kit';
import { address, generateKeyPairSigner, getBase58Decoder } from '@solana/kit';
import { USDC_SOLANA_MINT } from '@tollgate/protocol';
import { setUpFaucet } from './faucet.ts';
import { SolanaLedger } from './ledger.ts';
import type { SolanaFault } from './methods.ts';
import { createMethods } from './methods.ts';
import { startRpcServer } from './server.ts';

export type { SolanaFault } from './methods.ts';

export interface SolanaSandbox {
  /** JSON-RPC endpoint, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** The USDC mint (the real mainnet address). */
  readonly mint: string;
  /** A second 6-decimal mint ("fake USDC") for wrong-asset tests. */
  readonly otherMint: string;
  /** Not mainnet's: a proof against this chain can never be mistaken for a mainnet one. */
  readonly genesisHash: string;
  /** Creates `owner`'s USDC token account if needed, mints `usdcAtomic`, sends `lamports` (default 1 SOL). */
  faucet(owner: string, usdcAtomic: bigint, lamports?: bigint): Promise<void>;
  /** Same for the other mint (no SOL). */
  mintOther(owner: string, atomic: bigint): Promise<void>;
  /** USDC held by `owner` across all its token accounts (0n when it has none). */
  usdcBalance(owner: string): Promise<bigint>;
  setFault(fault: SolanaFault): void;
  readonly fault: SolanaFault;
  /** Promotes every confirmed transaction to finalized. */
  finalizeAll(): void;
  /**
   * Produces `count` empty blocks. Blockhashes older than 150 blocks stop being valid,
   * so a test can expire a signed, unsent transaction (`advanceBlocks(151)`).
   */
  advanceBlocks(count: number): void;
  close(): Promise<void>;
}

const ONE_SOL = 1_000_000_000n;

export async function startSolanaSandbox(
  /** `genesisHash` lets a test stand the sandbox in for another network (e.g. mainnet's). */
  opts: { port?: number; host?: string; genesisHash?: string } = {},
): Promise<SolanaSandbox> {
  const ledger = new SolanaLedger();
  const mint = address(USDC_SOLANA_MINT);
  const otherMint: Address = (await generateKeyPairSigner()).address;
  const faucet = await setUpFaucet(ledger, [mint, otherMint]);
  const genesisHash =
    opts.genesisHash ??
    getBase58Decoder().decode(createHash('sha256').update('tollgate-solana-sandbox').digest());

  let fault: SolanaFault = 'none';
  const methods = createMethods({ ledger, faucet, genesisHash, fault: () => fault });
  const server = await startRpcServer(methods, () => fault, opts);

  return {
    url: server.url,
    mint,
    otherMint,
    genesisHash,
    async faucet(owner, usdcAtomic, lamports = ONE_SOL) {
      await faucet.fund(owner, mint, usdcAtomic, lamports);
    },
    async mintOther(owner, atomic) {
      await faucet.fund(owner, otherMint, atomic, 0n);
    },
    async usdcBalance(owner) {
      return ledger.tokenAccountsOf(owner, { mint }).reduce((sum, a) => sum + a.state.amount, 0n);
    },
    setFault(f) {
      fault = f;
      ledger.holdFinality = f === 'hold_finality';
    },
    get fault() {
      return fault;
    },
    finalizeAll() {
      ledger.finalizeAll();
    },
    advanceBlocks(count) {
      ledger.advanceBlocks(count);
    },
    close: () => server.close(),
  };
}
