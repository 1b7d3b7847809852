/**
 * Solana payouts: one v0 transaction per batch, fee payer and token authority the
 * platform wallet, for each recipient a CreateAssociatedTokenIdempotent (its USDC
 * account may not exist yet) and a TransferChecked from the platform's USDC account,
 * then one SPL Memo naming the payout. The signature is known before sending and the
 * transaction cannot land after its blockhash's last valid block height.
 */
import type { Address, Base64EncodedWireTransaction, Instruction, Signature } from '@solana/kit';
import {
  address,
  appendTransactionMessageInstructions,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  isAddress,
  isSolanaError,
  pipe,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getTransferCheckedInstruction,
} from '@solana-program/token';
import { SOLANA_TOKEN_PROGRAMS, SPL_MEMO_PROGRAM, USDC_DECIMALS, USDC_SOLANA_MINT } from '@tollgate/protocol';
import type { PayoutChain, PayoutTxStatus, SendResult, SignedPayout, Transfer } from './payout-chain.ts';
import type { SolanaPlatformKey } from './platform-keys.ts';

/** Solana's packet limit for a serialized transaction. */
const MAX_TX_BYTES = 1232;
/** Two instructions and two new accounts per recipient: 8 fit with room to spare (about 1.1 KB). */
const MAX_TRANSFERS_PER_TX = 8;

export interface SolanaPayoutOptions {
  key: SolanaPlatformKey;
  rpcUrl: string;
  /** What counts as landed (the gateway's SOLANA_COMMITMENT). */
  commitment: 'confirmed' | 'finalized';
  /** Default: USDC. */
  mint?: string;
}

const json = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));

function describe(e: unknown): string {
  const cause = (e as Error)?.cause as Error | undefined;
  return `${(e as Error)?.message ?? String(e)}${cause?.message ? `: ${cause.message}` : ''}`;
}

export function solanaPayoutChain(opts: SolanaPayoutOptions): PayoutChain {
  const rpc = createSolanaRpc(opts.rpcUrl);
  const mint = address(opts.mint ?? USDC_SOLANA_MINT);
  const signerP = createKeyPairSignerFromBytes(opts.key.secretKey);
  const wanted = opts.commitment === 'finalized' ? ['finalized'] : ['confirmed', 'finalized'];
  let tokenProgramP: Promise<Address> | undefined;

  function tokenProgram(): Promise<Address> {
    tokenProgramP ??= (async () => {
      const { value } = await rpc.getAccountInfo(mint, { encoding: 'base64' }).send();
      const owner = value?.owner;
      if (!owner || !SOLANA_TOKEN_PROGRAMS.includes(owner)) {
        throw new Error(`${mint} is not an SPL token mint on the node at ${opts.rpcUrl}`);
      }
      return owner;
    })();
    tokenProgramP.catch(() => {
      tokenProgramP = undefined;
    });
    return tokenProgramP;
  }

  async function sourceAccount(): Promise<Address> {
    const [source] = await findAssociatedTokenPda({
      owner: address(opts.key.address),
      mint,
      tokenProgram: await tokenProgram(),
    });
    return source;
  }

  return {
    chain: 'solana',
    address: opts.key.address,
    maxTransfersPerTx: MAX_TRANSFERS_PER_TX,

    async identity() {
      return rpc.getGenesisHash().send();
    },

    isRecipient: (a) => isAddress(a),

    async usdcBalance() {
      const { value } = await rpc.getAccountInfo(await sourceAccount(), { encoding: 'base64' }).send();
      if (!value) return 0n;
      const { value: balance } = await rpc.getTokenAccountBalance(await sourceAccount()).send();
      return BigInt(balance.amount);
    },

    async gasBalance() {
      return (await rpc.getBalance(address(opts.key.address)).send()).value;
    },

    async sign(transfers: Transfer[], memo: string): Promise<SignedPayout> {
      if (transfers.length === 0 || transfers.length > MAX_TRANSFERS_PER_TX) {
        throw new RangeError(`a Solana payout pays 1 to ${MAX_TRANSFERS_PER_TX} recipients`);
      }
      const signer = await signerP;
      const program = await tokenProgram();
      const source = await sourceAccount();
      const ixs: Instruction[] = [];
      for (const t of transfers) {
        if (t.amount <= 0n) throw new RangeError('a payout transfer must be positive');
        const owner = address(t.recipient);
        const [destination] = await findAssociatedTokenPda({ owner, mint, tokenProgram: program });
        ixs.push(
          await getCreateAssociatedTokenIdempotentInstructionAsync({
            payer: signer,
            owner,
            mint,
            tokenProgram: program,
          }),
          getTransferCheckedInstruction(
            { source, mint, destination, authority: signer, amount: t.amount, decimals: USDC_DECIMALS },
            { programAddress: program },
          ),
        );
      }
      // The SPL Memo program (not the memo package's default) with no signer accounts.
      ixs.push({ programAddress: address(SPL_MEMO_PROGRAM), data: new TextEncoder().encode(memo) });
      const { value: lifetime } = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(signer, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
        (m) => appendTransactionMessageInstructions(ixs, m),
      );
      const tx = await signTransactionMessageWithSigners(message);
      const wire = getBase64EncodedWireTransaction(tx);
      const size = Buffer.from(wire, 'base64').length;
      if (size > MAX_TX_BYTES) throw new Error(`payout transaction is ${size} bytes, over ${MAX_TX_BYTES}`);
      return {
        tx: getSignatureFromTransaction(tx),
        txBytes: wire,
        txExpiry: lifetime.lastValidBlockHeight.toString(),
      };
    },

    async send(signed: SignedPayout): Promise<SendResult> {
      try {
        await rpc
          .sendTransaction(signed.txBytes as Base64EncodedWireTransaction, {
            encoding: 'base64',
            preflightCommitment: 'confirmed',
          })
          .send();
        return { kind: 'sent' };
      } catch (e) {
        if (isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)) {
          // Sent before and processed: as good as sent now.
          if (isSolanaError(e.cause, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED))
            return { kind: 'sent' };
          return { kind: 'refused', reason: describe(e) };
        }
        if (
          isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE)
        ) {
          return { kind: 'refused', reason: describe(e) };
        }
        throw e;
      }
    },

    async txOutcome(tx) {
      const { value } = await rpc
        .getSignatureStatuses([tx as Signature], { searchTransactionHistory: true })
        .send();
      const s = value[0];
      if (!s) return 'unseen';
      if (s.err) return 'failed';
      return wanted.includes(s.confirmationStatus ?? '') ? 'landed' : 'unseen';
    },

    async status(signed: SignedPayout): Promise<PayoutTxStatus> {
      // Height first: a transaction not seen AFTER the chain passed its last valid height never lands.
      const height = await rpc.getBlockHeight({ commitment: 'confirmed' }).send();
      const { value } = await rpc
        .getSignatureStatuses([signed.tx as Signature], { searchTransactionHistory: true })
        .send();
      const s = value[0];
      if (s) {
        if (s.err) return { kind: 'failed', reason: `failed on-chain: ${json(s.err)}` };
        if (wanted.includes(s.confirmationStatus ?? '')) return { kind: 'landed' };
        return {
          kind: 'unknown',
          reason: `${s.confirmationStatus ?? 'processed'}, not yet ${opts.commitment}`,
        };
      }
      if (signed.txExpiry !== null && height > BigInt(signed.txExpiry)) {
        return {
          kind: 'failed',
          reason: `expired without landing (block height ${height} > last valid ${signed.txExpiry})`,
        };
      }
      return { kind: 'unknown', reason: 'not seen on-chain yet' };
    },
  };
}
