/**
 * The sandbox's money printer. One keypair is the fee payer, the SOL source and the
 * mint authority of every sandbox mint (written with setAccount, which is how the
 * sandbox "controls" the real USDC address). Funding goes through real signed
 * transactions, so it shows up in the history like anything else on the chain.
 */
import type { Address, Blockhash, Instruction, KeyPairSigner } from '@solana/kit';
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getMintEncoder,
  getMintToCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import type { SolanaLedger } from './ledger.ts';
import { SYSTEM_PROGRAM } from './parse.ts';

export const SANDBOX_DECIMALS = 6;
const FAUCET_LAMPORTS = 10n ** 15n;

export interface Faucet {
  readonly authority: Address;
  /** Creates `owner`'s associated token account for `mint` (idempotent), mints `atomic`, sends `lamports`. */
  fund(owner: string, mint: Address, atomic: bigint, lamports: bigint): Promise<string>;
  airdrop(to: string, lamports: bigint): Promise<string>;
}

function transferSol(from: KeyPairSigner, to: Address, amount: bigint): Instruction {
  const data = new Uint8Array(12);
  const view = new DataView(data.buffer);
  view.setUint32(0, 2, true);
  view.setBigUint64(4, amount, true);
  return {
    programAddress: address(SYSTEM_PROGRAM),
    accounts: [
      { address: from.address, role: AccountRole.WRITABLE_SIGNER, signer: from } as never,
      { address: to, role: AccountRole.WRITABLE },
    ],
    data,
  };
}

export async function setUpFaucet(ledger: SolanaLedger, mints: Address[]): Promise<Faucet> {
  const signer = await generateKeyPairSigner();
  ledger.setAccount(signer.address, address(SYSTEM_PROGRAM), new Uint8Array(0), FAUCET_LAMPORTS);
  for (const mint of mints) {
    const data = getMintEncoder().encode({
      mintAuthority: signer.address,
      supply: 0n,
      decimals: SANDBOX_DECIMALS,
      isInitialized: true,
      freezeAuthority: null,
    });
    ledger.setAccount(mint, TOKEN_PROGRAM_ADDRESS, new Uint8Array(data));
  }

  async function submit(instructions: Instruction[]): Promise<string> {
    const { blockhash, lastValidBlockHeight } = ledger.latestBlockhash();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(signer, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          { blockhash: blockhash as Blockhash, lastValidBlockHeight },
          m,
        ),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const tx = await signTransactionMessageWithSigners(message);
    return ledger.submit(new Uint8Array(getTransactionEncoder().encode(tx)), { skipPreflight: false });
  }

  return {
    authority: signer.address,
    async fund(owner, mint, atomic, lamports) {
      const wallet = address(owner);
      const ixs: Instruction[] = [];
      if (lamports > 0n) ixs.push(transferSol(signer, wallet, lamports));
      ixs.push(
        await getCreateAssociatedTokenIdempotentInstructionAsync({ payer: signer, owner: wallet, mint }),
      );
      if (atomic > 0n) {
        const [token] = await findAssociatedTokenPda({
          owner: wallet,
          mint,
          tokenProgram: TOKEN_PROGRAM_ADDRESS,
        });
        ixs.push(
          getMintToCheckedInstruction({
            mint,
            token,
            mintAuthority: signer,
            amount: atomic,
            decimals: SANDBOX_DECIMALS,
          }),
        );
      }
      return submit(ixs);
    },
    airdrop(to, lamports) {
      return submit([transferSol(signer, address(to), lamports)]);
    },
  };
}
