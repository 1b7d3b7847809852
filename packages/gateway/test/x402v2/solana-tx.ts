/**
 * Hand-built Solana transactions (@solana/kit 8) for x402 v2 tests: what the stock x402
 * SVM client never builds — draining attempts on the sponsor, extra instructions and
 * signers, compute budgets above the caps. Every transaction has the sponsor as fee
 * payer with its signature slot empty, signed by whoever else it names, as a v2 payer
 * would hand it to the gateway. Copied from test/chains/solana-sponsor.test.ts.
 */
import type { Address, Instruction, KeyPairSigner, Signature, TransactionSigner } from '@solana/kit';
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  createKeyPairSignerFromBytes,
  createNoopSigner,
  createSolanaRpc,
  createTransactionMessage,
  getBase58Decoder,
  getBase58Encoder,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  signBytes,
} from '@solana/kit';
import {
  findAssociatedTokenPda,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { SPL_MEMO_PROGRAM } from '@tollgate/protocol';
import { COMPUTE_BUDGET_PROGRAM } from '../../src/chains/solana/sponsor.ts';

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';

export const computeLimit = (units: number): Instruction => {
  const data = new Uint8Array(5);
  data[0] = 2;
  new DataView(data.buffer).setUint32(1, units, true);
  return { programAddress: address(COMPUTE_BUDGET_PROGRAM), accounts: [], data };
};

export const computePrice = (microLamports: bigint): Instruction => {
  const data = new Uint8Array(9);
  data[0] = 3;
  new DataView(data.buffer).setBigUint64(1, microLamports, true);
  return { programAddress: address(COMPUTE_BUDGET_PROGRAM), accounts: [], data };
};

/** An SPL Memo (MemoSq4…), signed by `signers`. */
export const memoIx = (memo: string, signers: TransactionSigner[] = []): Instruction => ({
  programAddress: address(SPL_MEMO_PROGRAM),
  accounts: signers.map(
    (s) => ({ address: s.address, role: AccountRole.READONLY_SIGNER, signer: s }) as never,
  ),
  data: new TextEncoder().encode(memo),
});

/** A SystemProgram Transfer of `lamports` from `from` (a signer) to `to`. */
export const systemTransfer = (from: TransactionSigner, to: Address, lamports: bigint): Instruction => {
  const data = new Uint8Array(12);
  const view = new DataView(data.buffer);
  view.setUint32(0, 2, true);
  view.setBigUint64(4, lamports, true);
  return {
    programAddress: address(SYSTEM_PROGRAM),
    accounts: [
      { address: from.address, role: AccountRole.WRITABLE_SIGNER, signer: from } as never,
      { address: to, role: AccountRole.WRITABLE },
    ],
    data,
  };
};

/** The sponsor as a signer whose signature the gateway alone could add. */
export const noop = (owner: string) => createNoopSigner(address(owner));

/** Helpers bound to one chain and mint. */
export function solanaTx(rpcUrl: string, defaultMint: string) {
  const rpc = createSolanaRpc(rpcUrl);

  const ata = async (owner: string, mint: string = defaultMint) =>
    (
      await findAssociatedTokenPda({
        owner: address(owner),
        mint: address(mint),
        tokenProgram: TOKEN_PROGRAM_ADDRESS,
      })
    )[0];

  /** A TransferChecked of `amount` from `source` (default: the authority's token account) to `to`'s. */
  async function transfer(o: {
    authority: TransactionSigner;
    to: string;
    amount: bigint;
    source?: Address;
    decimals?: number;
    mint?: string;
  }): Promise<Instruction> {
    const mint = address(o.mint ?? defaultMint);
    return getTransferCheckedInstruction({
      source: o.source ?? (await ata(o.authority.address, mint)),
      mint,
      destination: await ata(o.to, mint),
      authority: o.authority,
      amount: o.amount,
      decimals: o.decimals ?? 6,
    });
  }

  /** A v0 transaction with `feePayer` (unsigned) as fee payer, signed by every other signer named. */
  async function handBuilt(feePayer: string, instructions: Instruction[]): Promise<string> {
    const { value: lifetime } = await rpc.getLatestBlockhash().send();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(address(feePayer), m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const tx = await partiallySignTransactionMessageWithSigners(message);
    return getBase64EncodedWireTransaction(tx);
  }

  /**
   * What `wire` would do with the sponsor's signature added (base58 64-byte keypair):
   * proves a refused payload was a real attack. Simulates only; nothing is sent.
   */
  async function simulateCosigned(wire: string, sponsorKeyBase58: string) {
    const sponsor = await createKeyPairSignerFromBytes(
      new Uint8Array(getBase58Encoder().encode(sponsorKeyBase58)),
    );
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
    const sig = await signBytes(sponsor.keyPair.privateKey, tx.messageBytes);
    const signed = { ...tx, signatures: { ...tx.signatures, [sponsor.address]: sig } };
    const full = getBase64EncodedWireTransaction(signed as never);
    return (
      await rpc
        .simulateTransaction(full, {
          encoding: 'base64',
          sigVerify: true,
          replaceRecentBlockhash: false,
        } as never)
        .send()
    ).value as { err: unknown; logs: string[] | null };
  }

  /** The id `wire` would have once the sponsor co-signed it: its signature over the message. */
  async function txIdOf(wire: string, sponsorKeyBase58: string): Promise<string> {
    const sponsor = await createKeyPairSignerFromBytes(
      new Uint8Array(getBase58Encoder().encode(sponsorKeyBase58)),
    );
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
    return getBase58Decoder().decode(await signBytes(sponsor.keyPair.privateKey, tx.messageBytes));
  }

  /** The status of a transaction id, or null when the chain never saw it. */
  async function status(txId: string) {
    const { value } = await rpc
      .getSignatureStatuses([txId as Signature], { searchTransactionHistory: true })
      .send();
    return value[0] ?? null;
  }

  const sol = async (owner: string) => (await rpc.getBalance(address(owner)).send()).value;
  const slot = async () => rpc.getSlot().send();

  return { rpc, ata, transfer, handBuilt, simulateCosigned, txIdOf, status, sol, slot };
}

export type SolanaTx = ReturnType<typeof solanaTx>;
export type { KeyPairSigner };
