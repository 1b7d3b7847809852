/**
 * ChainHarness over the Sui sandbox: real Ed25519 keys, transactions built and signed by
 * the SDK (resolved through the sandbox's SimulateTransaction like on a real node), and
 * the production verifier pointed at the sandbox URL.
 */
import { SuiGrpcClient } from '@mysten/sui/grpc';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { Transaction, TransactionDataBuilder } from '@mysten/sui/transactions';
import { toBase58 } from '@mysten/sui/utils';
import type { SuiSandbox } from '@tollgate/sandbox';
import { startSuiSandbox } from '@tollgate/sandbox';
import { createSuiVerifier } from '../../src/chains/sui/index.ts';
import type { ChainHarness, HarnessTransfer, VerifierOptions } from './verifier-contract.ts';

const USDC = 1_000_000n;

/** Starts its own sandbox unless given one (which it then leaves running on close). */
export async function makeSuiHarness(shared?: SuiSandbox): Promise<ChainHarness> {
  const sandbox = shared ?? (await startSuiSandbox());
  const client = new SuiGrpcClient({ network: 'localnet', baseUrl: sandbox.url });
  const payer = Ed25519Keypair.generate();
  const other = Ed25519Keypair.generate();
  for (const kp of [payer, other]) {
    sandbox.faucet(kp.toSuiAddress(), 1000n * USDC);
    sandbox.mintOther(kp.toSuiAddress(), 1000n * USDC);
  }

  /** Builds and signs (never submits) one transaction. */
  async function prepare(opts: {
    transfers: HarnessTransfer[];
    memos: string[];
    from?: 'payer' | 'other';
    fail?: boolean;
  }): Promise<{ id: string; submit(): Promise<void> }> {
    const signer = opts.from === 'other' ? other : payer;
    const sender = signer.toSuiAddress();
    const tx = new Transaction();
    tx.setSender(sender);
    const byType = new Map<string, HarnessTransfer[]>();
    for (const t of opts.transfers) {
      const type = t.asset === 'other' ? sandbox.otherCoinType : sandbox.coinType;
      byType.set(type, [...(byType.get(type) ?? []), t]);
    }
    for (const [coinType, transfers] of byType) {
      const [coin, ...rest] = (await client.core.listCoins({ owner: sender, coinType })).objects;
      if (!coin) throw new Error(`no ${coinType} coin for ${sender}`);
      const primary = tx.objectRef(coin);
      if (rest.length > 0)
        tx.mergeCoins(
          primary,
          rest.map((c) => tx.objectRef(c)),
        );
      const amounts = transfers.map((t) => t.amount);
      // An extra leg worth the whole coin makes the split overdraw: it fails during execution.
      if (opts.fail) amounts.push(BigInt(coin.balance));
      const parts = tx.splitCoins(
        primary,
        amounts.map((a) => tx.pure.u64(a)),
      );
      transfers.forEach((t, i) => {
        tx.transferObjects([parts[i]!], t.to);
      });
      if (opts.fail) tx.transferObjects([parts[transfers.length]!], sender);
    }
    for (const m of opts.memos) tx.pure.string(m);
    if (opts.fail) {
      // A fully resolved transaction skips simulation, which would refuse to build it.
      const [gas] = (await client.core.listCoins({ owner: sender })).objects;
      tx.setGasPayment([gas!]);
      tx.setGasPrice(1000);
      tx.setGasBudget(50_000_000);
    }
    const bytes = await tx.build({ client });
    const { signature } = await signer.signTransaction(bytes);
    const id = TransactionDataBuilder.getDigestFromBytes(bytes);
    return {
      id,
      async submit() {
        const result = await client.core.executeTransaction({ transaction: bytes, signatures: [signature] });
        if (Boolean(opts.fail) !== (result.$kind === 'FailedTransaction')) {
          throw new Error(`unexpected outcome ${result.$kind} for fail=${Boolean(opts.fail)}`);
        }
        const digest = (result.Transaction ?? result.FailedTransaction)?.digest;
        if (digest !== id) throw new Error(`executed ${digest}, signed ${id}`);
      },
    };
  }

  const makeVerifier = ({ rpcUrl = sandbox.url, ...guard }: VerifierOptions = {}) =>
    createSuiVerifier({ rpcUrl, network: 'localnet', timeoutMs: 5_000, ...guard });

  return {
    chain: 'sui',
    network: 'localnet',
    verifier: makeVerifier(),
    makeVerifier,
    rpcUrl: sandbox.url,
    asset: sandbox.coinType,
    payer: payer.toSuiAddress(),
    other: other.toSuiAddress(),
    newRecipient: async () => Ed25519Keypair.generate().toSuiAddress(),
    prepare,
    async send(opts) {
      const tx = await prepare(opts);
      await tx.submit();
      return tx.id;
    },
    setFault: (f) => sandbox.setFault(f),
    finalizeAll: () => sandbox.finalizeAll(),
    unknownTxId: () => toBase58(crypto.getRandomValues(new Uint8Array(32))),
    close: async () => {
      if (!shared) await sandbox.close();
    },
  };
}
