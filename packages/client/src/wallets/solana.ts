/**
 * Pays Tollgate accept options with a Solana keypair: one v0 transaction with a
 * `transferChecked` per split (creating the recipient's token account if needed)
 * and exactly one SPL Memo carrying the option's memo.
 */
import { readFileSync } from 'node:fs';
import type { Address, Blockhash, Instruction, KeyPairSigner, Signature } from '@solana/kit';
import {
  address,
  appendTransactionMessageInstructions,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  createTransactionMessage,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  isAddress,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signBytes,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getAddMemoInstruction } from '@solana-program/memo';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getTransferCheckedInstruction,
} from '@solana-program/token';
import type { AcceptOption, ProtocolErrorCode } from '@tollgate/protocol';
import {
  ProtocolError,
  parseAmount,
  SOLANA_TOKEN_PROGRAMS,
  SPL_MEMO_PROGRAM,
  USDC_DECIMALS,
  USDC_SOLANA_MINT,
} from '@tollgate/protocol';
import { assertNetwork, cachedIdentity } from './network.ts';
import type { MessageSigner, PaymentWallet } from './wallet.ts';

/** A Solana payer wallet: pays accept options, and signs messages (e.g. to `signIn`). */
export interface SolanaWallet extends PaymentWallet, MessageSigner {
  readonly chain: 'solana';
}

/** x402's limit; our memos are ~50 bytes. */
const MAX_MEMO_BYTES = 256;

export interface SolanaWalletOptions {
  /** The 64-byte keypair (seed ‖ public key), as in a Solana CLI key file. */
  secretKey: Uint8Array;
  rpcUrl: string;
  /** How settled the payment must be before `pay` returns. Default `confirmed`. */
  commitment?: 'confirmed' | 'finalized';
  /** Give up waiting after this long (the transaction may still land). Default 60 s. */
  confirmTimeoutMs?: number;
  /** Default 400 ms, about one Solana slot. */
  pollIntervalMs?: number;
  /** Mints the wallet agrees to pay in, with their decimals. Default: USDC (6). */
  mints?: Record<string, number>;
}

/** A failed payment. `signature` is set when a transaction was sent: check it before paying again. */
export class SolanaPaymentError extends ProtocolError {
  readonly signature: string | undefined;
  constructor(code: ProtocolErrorCode, message: string, signature?: string) {
    super(code, message);
    this.signature = signature;
  }
}

/** Reads a Solana CLI key file (a JSON array of 64 numbers). */
export function loadSolanaKeyFile(path: string): Uint8Array {
  return parseSolanaKeyFile(readFileSync(path, 'utf8'));
}

export function parseSolanaKeyFile(text: string): Uint8Array {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('not a Solana key file: expected a JSON array of 64 numbers');
  }
  if (
    !Array.isArray(value) ||
    value.length !== 64 ||
    !value.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)
  ) {
    throw new Error('not a Solana key file: expected a JSON array of 64 numbers');
  }
  return Uint8Array.from(value as number[]);
}

interface Leg {
  to: Address;
  amount: bigint;
}

function refuse(code: ProtocolErrorCode, message: string): never {
  throw new SolanaPaymentError(code, message);
}

interface Payment {
  mint: Address;
  legs: Leg[];
}

function legsOf(option: AcceptOption, mints: Map<string, number>): Payment {
  if (option.chain !== 'solana') refuse('unsupported_chain', `a Solana wallet cannot pay on ${option.chain}`);
  if (typeof option.mint !== 'string' || !isAddress(option.mint)) {
    refuse('invalid_requirement', 'the Solana option has no valid mint');
  }
  // Spending limits are in USDC: a gateway must not get another token paid under that name.
  const decimals = mints.get(option.mint);
  if (decimals === undefined) refuse('invalid_requirement', `the wallet does not pay in ${option.mint}`);
  if (option.decimals !== decimals) refuse('invalid_requirement', `${option.mint} has ${decimals} decimals`);
  const memoBytes = new TextEncoder().encode(typeof option.memo === 'string' ? option.memo : '').length;
  if (memoBytes === 0 || memoBytes > MAX_MEMO_BYTES)
    refuse('invalid_requirement', 'the option has no usable memo');
  const legs: Leg[] = [];
  for (const split of option.splits ?? []) {
    if (typeof split.payTo !== 'string' || !isAddress(split.payTo)) {
      refuse('invalid_requirement', 'a split has an invalid Solana address');
    }
    const amount = parseAmount(split.amount, decimals);
    if (amount > 0n) legs.push({ to: split.payTo, amount });
  }
  if (legs.length === 0) refuse('invalid_requirement', 'the option has nothing to pay');
  const total = legs.reduce((s, l) => s + l.amount, 0n);
  if (total !== parseAmount(option.totalAmount, decimals)) {
    refuse('invalid_requirement', 'the splits do not add up to totalAmount');
  }
  return { mint: option.mint, legs };
}

/** Aborted after sending: the money may move anyway, so the caller must get the signature. */
const abandoned = (signature: string) =>
  new SolanaPaymentError(
    'payment_failed',
    `stopped waiting for ${signature} (aborted); it may still land — check it before paying again`,
    signature,
  );

const describe = (e: unknown) => {
  const cause = (e as Error)?.cause as Error | undefined;
  return `${(e as Error)?.message ?? String(e)}${cause?.message ? `: ${cause.message}` : ''}`;
};

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', abort);
      resolve();
    }
    function abort() {
      clearTimeout(t);
      reject(signal?.reason);
    }
    signal?.addEventListener('abort', abort, { once: true });
  });

/**
 * @example
 * const wallet = solanaWallet({ secretKey: loadSolanaKeyFile('~/.config/solana/id.json'), rpcUrl });
 * const signature = await wallet.pay(requirement.accepts[0]);
 */
export function solanaWallet(opts: SolanaWalletOptions): SolanaWallet {
  if (!(opts.secretKey instanceof Uint8Array) || opts.secretKey.length !== 64) {
    throw new Error('secretKey must be the 64-byte Solana keypair (seed followed by public key)');
  }
  const secretKey = Uint8Array.from(opts.secretKey);
  const walletAddress = getBase58Decoder().decode(secretKey.subarray(32));
  const rpc = createSolanaRpc(opts.rpcUrl);
  const commitment = opts.commitment ?? 'confirmed';
  const confirmTimeoutMs = opts.confirmTimeoutMs ?? 60_000;
  const pollIntervalMs = opts.pollIntervalMs ?? 400;
  const mints = new Map(Object.entries(opts.mints ?? { [USDC_SOLANA_MINT]: USDC_DECIMALS }));
  // Created on first use (WebCrypto is async); it also proves the two halves of the key match.
  let signer: Promise<KeyPairSigner> | undefined;
  const chainIdentity = cachedIdentity((abortSignal) => rpc.getGenesisHash().send({ abortSignal }));

  async function instructions(
    payer: KeyPairSigner,
    option: AcceptOption,
    paid: Payment,
    signal?: AbortSignal,
  ) {
    const { mint, legs } = paid;
    const mintAccount = await rpc.getAccountInfo(mint, { encoding: 'base64' }).send({ abortSignal: signal });
    const tokenProgram = mintAccount.value?.owner;
    if (!tokenProgram || !SOLANA_TOKEN_PROGRAMS.includes(tokenProgram)) {
      refuse('invalid_requirement', `mint ${mint} is not an SPL token mint on this chain`);
    }
    const [source] = await findAssociatedTokenPda({ owner: payer.address, mint, tokenProgram });
    const ixs: Instruction[] = [];
    const created = new Set<string>();
    for (const leg of legs) {
      const [destination] = await findAssociatedTokenPda({ owner: leg.to, mint, tokenProgram });
      if (!created.has(destination)) {
        created.add(destination);
        ixs.push(
          await getCreateAssociatedTokenIdempotentInstructionAsync({
            payer,
            owner: leg.to,
            mint,
            tokenProgram,
          }),
        );
      }
      ixs.push(
        getTransferCheckedInstruction(
          { source, mint, destination, authority: payer, amount: leg.amount, decimals: option.decimals },
          { programAddress: tokenProgram },
        ),
      );
    }
    // The memo package defaults to a different program than mainnet wallets use.
    ixs.push(getAddMemoInstruction({ memo: option.memo }, { programAddress: address(SPL_MEMO_PROGRAM) }));
    return ixs;
  }
  async function waitUntilSettled(signature: Signature, lastValidBlockHeight: bigint, signal?: AbortSignal) {
    const deadline = Date.now() + confirmTimeoutMs;
    const wanted = commitment === 'finalized' ? ['finalized'] : ['confirmed', 'finalized'];
    while (Date.now() < deadline) {
      if (signal?.aborted) throw abandoned(signature);
      try {
        const { value } = await rpc.getSignatureStatuses([signature]).send({ abortSignal: signal });
        const status = value[0];
        if (status?.err) {
          throw new SolanaPaymentError(
            'payment_failed',
            `payment transaction failed on-chain: ${JSON.stringify(status.err, (_k, v) => (typeof v === 'bigint' ? Number(v) : v))}`,
            signature,
          );
        }
        if (status && wanted.includes(status.confirmationStatus ?? '')) return;
        if (!status && (await rpc.getBlockHeight().send({ abortSignal: signal })) > lastValidBlockHeight) {
          throw new SolanaPaymentError(
            'payment_failed',
            'payment transaction expired without landing',
            signature,
          );
        }
      } catch (e) {
        if (e instanceof SolanaPaymentError) throw e;
        if (signal?.aborted) throw abandoned(signature);
        // A flaky RPC answer is no verdict on the payment: keep asking until the deadline.
      }
      await sleep(pollIntervalMs, signal).catch(() => {
        throw abandoned(signature);
      });
    }
    throw new SolanaPaymentError(
      'payment_failed',
      `payment not ${commitment} within ${confirmTimeoutMs} ms; it may still land — check ${signature} before paying again`,
      signature,
    );
  }

  return {
    chain: 'solana',
    address: walletAddress,
    chainIdentity,
    async signMessage(message) {
      signer ??= createKeyPairSignerFromBytes(secretKey);
      const { keyPair } = await signer;
      return getBase58Decoder().decode(
        await signBytes(keyPair.privateKey, new TextEncoder().encode(message)),
      );
    },
    async pay(option, payOpts = {}) {
      const { signal } = payOpts;
      const paid = legsOf(option, mints);
      signal?.throwIfAborted();
      assertNetwork(option, await chainIdentity({ signal }), `the node at ${opts.rpcUrl}`);
      signer ??= createKeyPairSignerFromBytes(secretKey);
      const payer = await signer;

      const ixs = await instructions(payer, option, paid, signal);
      const { value: lifetime } = await rpc
        .getLatestBlockhash({ commitment: 'confirmed' })
        .send({ abortSignal: signal });
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) =>
          setTransactionMessageLifetimeUsingBlockhash(
            {
              blockhash: lifetime.blockhash as Blockhash,
              lastValidBlockHeight: lifetime.lastValidBlockHeight,
            },
            m,
          ),
        (m) => appendTransactionMessageInstructions(ixs, m),
      );
      const tx = await signTransactionMessageWithSigners(message);
      const signature = getSignatureFromTransaction(tx);
      signal?.throwIfAborted();
      try {
        await rpc
          .sendTransaction(getBase64EncodedWireTransaction(tx), {
            encoding: 'base64',
            preflightCommitment: 'confirmed',
          })
          .send({ abortSignal: signal });
      } catch (e) {
        // Preflight refusals mean nothing was sent; a transport error might have delivered it.
        throw new SolanaPaymentError(
          'payment_failed',
          `sending the payment failed: ${describe(e)}`,
          signature,
        );
      }
      await waitUntilSettled(signature, lifetime.lastValidBlockHeight, signal);
      return signature;
    },
  };
}
