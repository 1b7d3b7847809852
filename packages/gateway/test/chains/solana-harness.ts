/**
 * ChainHarness for Solana: the sandbox chain, real keypairs signing real v0
 * transactions, and the production verifier talking to the sandbox over HTTP.
 */
import type { Address, Instruction, KeyPairSigner } from '@solana/kit';
import {
  address,
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getAddMemoInstruction } from '@solana-program/memo';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { SPL_MEMO_PROGRAM } from '@tollgate/protocol';
import type { SolanaSandbox } from '@tollgate/sandbox';
import { startSolanaSandbox } from '@tollgate/sandbox';
import { createSolanaVerifier } from '../../src/chains/solana/index.ts';
import type { ChainHarness, HarnessTransfer, VerifierOptions } from './verifier-contract.ts';

export const ata = async (owner: string, mint: string): Promise<Address> =>
  (
    await findAssociatedTokenPda({
      owner: address(owner),
      mint: address(mint),
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    })
  )[0];

export type SolanaHarness = ChainHarness & {
  sandbox: SolanaSandbox;
  /**
   * Submits a transaction with two signers: `other` pays the fee (signatures[0], the
   * transaction's id) while the payer signs the transfers (signatures[1]).
   */
  sendSponsored(opts: Parameters<ChainHarness['send']>[0]): Promise<{ id: string; signatures: string[] }>;
};

export async function makeSolanaHarness(): Promise<SolanaHarness> {
  const sandbox = await startSolanaSandbox();
  const rpc = createSolanaRpc(sandbox.url);
  const [payer, other] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
  for (const s of [payer, other]) {
    await sandbox.faucet(s.address, 100_000_000n);
    await sandbox.mintOther(s.address, 100_000_000n);
  }
  // finalized: the hold_finality fault keeps new transactions at 'confirmed'.
  const makeVerifier = ({ rpcUrl = sandbox.url, ...guard }: VerifierOptions = {}) =>
    createSolanaVerifier({
      rpcUrl,
      network: 'localnet',
      commitment: 'finalized',
      timeoutMs: 5_000,
      ...guard,
    });
  const verifier = makeVerifier();

  async function transferIxs(signer: KeyPairSigner, transfers: HarnessTransfer[]): Promise<Instruction[]> {
    const ixs: Instruction[] = [];
    for (const t of transfers) {
      const mint = address(t.asset === 'other' ? sandbox.otherMint : sandbox.mint);
      ixs.push(
        await getCreateAssociatedTokenIdempotentInstructionAsync({
          payer: signer,
          owner: address(t.to),
          mint,
        }),
      );
      ixs.push(
        getTransferCheckedInstruction({
          source: await ata(signer.address, mint),
          mint,
          destination: await ata(t.to, mint),
          authority: signer,
          amount: t.amount,
          decimals: 6,
        }),
      );
    }
    return ixs;
  }

  /** Signs (never submits) one transaction; `feePayer` adds a second signer that pays the fee. */
  async function prepare({
    transfers,
    memos,
    from = 'payer',
    fail = false,
    feePayer,
  }: Parameters<ChainHarness['prepare']>[0] & { feePayer?: KeyPairSigner }) {
    const signer = from === 'payer' ? payer : other;
    const ixs = await transferIxs(signer, transfers);
    for (const memo of memos) {
      ixs.push(getAddMemoInstruction({ memo }, { programAddress: address(SPL_MEMO_PROGRAM) }));
    }
    if (fail) {
      // Spends far more than the balance: executes, fails, pays the fee, moves nothing.
      const mint = address(sandbox.mint);
      const source = await ata(signer.address, mint);
      ixs.push(
        getTransferCheckedInstruction({
          source,
          mint,
          destination: source,
          authority: signer,
          amount: 10n ** 15n,
          decimals: 6,
        }),
      );
    }
    const { value: lifetime } = await rpc.getLatestBlockhash().send();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(feePayer ?? signer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions(ixs, m),
    );
    const tx = await signTransactionMessageWithSigners(message);
    const b58 = getBase58Decoder();
    // In message order: the fee payer's signature first (the transaction's id), then the others.
    const signatures = Object.values(tx.signatures).map((s) => b58.decode(s!));
    return {
      id: getSignatureFromTransaction(tx) as string,
      signatures,
      async submit() {
        // skipPreflight: a failing transaction must reach the chain, as on mainnet.
        await rpc
          .sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64', skipPreflight: true })
          .send();
      },
    };
  }

  return {
    sandbox,
    chain: 'solana',
    network: 'localnet',
    verifier,
    asset: sandbox.mint,
    payer: payer.address,
    other: other.address,
    async newRecipient() {
      return (await generateKeyPairSigner()).address;
    },
    makeVerifier,
    rpcUrl: sandbox.url,
    prepare,
    async send(opts) {
      const tx = await prepare(opts);
      await tx.submit();
      return tx.id;
    },
    async sendSponsored(opts) {
      const tx = await prepare({ ...opts, feePayer: other });
      await tx.submit();
      return { id: tx.id, signatures: tx.signatures };
    },
    setFault(fault) {
      sandbox.setFault(fault);
    },
    finalizeAll() {
      sandbox.finalizeAll();
    },
    unknownTxId() {
      return getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(64)));
    },
    close: () => sandbox.close(),
  };
}
