/**
 * The gateway as x402 v2 `exact` facilitator on Solana (DESIGN §4.12): the payer signs a
 * transaction whose fee payer is the gateway's sponsor key; the sponsor checks it, stricter
 * than the x402 SVM scheme asks of a facilitator, simulates it, and later co-signs, sends
 * and confirms it.
 *
 * The sponsor's signature is over the whole message, so a transaction that mentions the
 * sponsor anywhere but as fee payer could spend its SOL or tokens once co-signed. `check`
 * therefore accepts exactly one shape — the one the stock x402 client builds:
 *
 *   0 SetComputeUnitLimit (≤ maxComputeUnitLimit)
 *   1 SetComputeUnitPrice (≤ maxComputeUnitPrice)
 *   2 SPL Token TransferChecked: ATA(payer, mint) → ATA(payTo, mint), authority = payer,
 *     the exact amount, mint and decimals
 *   3 SPL Memo (MemoSq4…) = the offer's memo
 *
 * in a v0 message without address lookup tables, with exactly two signers: the sponsor
 * (first, the fee payer, slot still empty) and the payer (signature present and valid);
 * the sponsor appears in no instruction, and every other account of the message is used
 * by an instruction.
 *
 * The transaction id is known at check time: ed25519 is deterministic, so the sponsor's
 * signature over the message — signatures[0] of the final transaction — is computed
 * then, and is the key the payment is redeemed under before anything is sent.
 */
import type {
  Address,
  Base64EncodedWireTransaction,
  Blockhash,
  KeyPairSigner,
  Signature,
  SignatureBytes,
  Transaction,
} from '@solana/kit';
import {
  address,
  createKeyPairSignerFromBytes,
  createKeyPairSignerFromPrivateKeyBytes,
  createSolanaRpc,
  getBase58Decoder,
  getBase64Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getPublicKeyFromAddress,
  getTransactionDecoder,
  getTransactionEncoder,
  isAddress,
  signBytes,
  verifySignature,
} from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import { SPL_MEMO_PROGRAM, SPL_TOKEN_PROGRAM, solanaCaip2, USDC_SOLANA_MINT } from '@tollgate/protocol';
import { ChainUnavailableError } from '../chain.ts';
import { askChain } from '../deadline.ts';
import type { ExactV2Scheme, ExpectedTransfer, PaymentCheck, Settlement } from '../exact-v2.ts';
import type { PayerRateLimiter } from './payer-limit.ts';
import { createPayerRateLimiter } from './payer-limit.ts';

export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
/** The x402 SVM scheme's cap on the compute-unit price: 5 lamports per CU. No option may exceed it. */
export const X402_MAX_COMPUTE_UNIT_PRICE = 5_000_000n;
/**
 * Default cap on the price, in micro-lamports per CU (1 lamport/CU). The stock client asks 1
 * micro-lamport; the payer chooses a price the sponsor pays, so the default stays well under
 * the scheme's cap.
 */
export const DEFAULT_MAX_COMPUTE_UNIT_PRICE = 1_000_000n;
/** The stock client asks 20,000 CU; a TransferChecked and a memo use well under that. */
export const DEFAULT_MAX_COMPUTE_UNIT_LIMIT = 50_000;
/** Solana's packet limit: no transaction is larger. */
export const MAX_TRANSACTION_BYTES = 1232;
const MAX_PAYLOAD_CHARS = Math.ceil(MAX_TRANSACTION_BYTES / 3) * 4;

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_CONFIRM_TIMEOUT_MS = 60_000;
const DEFAULT_POLL_INTERVAL_MS = 500;
const DEFAULT_RESEND_INTERVAL_MS = 2_000;
/** Consecutive failed RPC calls after which settle gives up with ChainUnavailableError. */
const MAX_CONSECUTIVE_RPC_FAILURES = 3;

const IX_SET_COMPUTE_UNIT_LIMIT = 2;
const IX_SET_COMPUTE_UNIT_PRICE = 3;
const IX_TRANSFER_CHECKED = 12;
/** SPL Token's `InsufficientFunds` custom error. */
const TOKEN_ERROR_INSUFFICIENT_FUNDS = 1;
const TRANSFER_INDEX = 2;
const ZERO_BLOCKHASH = '11111111111111111111111111111111';

/** Every `reason` check and settle can give (x402's names where x402 has one). */
export const SOLANA_SPONSOR_REASONS = [
  'invalid_exact_svm_payload_transaction_could_not_be_decoded',
  'invalid_exact_svm_payload_unsupported_version',
  'invalid_exact_svm_payload_address_lookup_tables',
  'invalid_exact_svm_fee_payer_mismatch',
  'invalid_exact_svm_payload_transaction_fee_payer_transferring_funds',
  'invalid_exact_svm_payload_excessive_signers',
  'invalid_exact_svm_payload_signature_invalid',
  'invalid_exact_svm_payload_transaction_instructions_length',
  'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction',
  'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high',
  'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction',
  'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high',
  'invalid_exact_svm_payload_no_transfer_instruction',
  'invalid_exact_svm_payload_unknown_fourth_instruction',
  'invalid_exact_svm_payload_mint_mismatch',
  'invalid_exact_svm_payload_amount_mismatch',
  'invalid_exact_svm_payload_decimals_mismatch',
  'invalid_exact_svm_payload_recipient_mismatch',
  'invalid_exact_svm_payload_payer_not_authority',
  'invalid_exact_svm_payload_source_mismatch',
  'invalid_exact_svm_payload_memo_count',
  'invalid_exact_svm_payload_memo_mismatch',
  'invalid_exact_svm_payload_unexpected_accounts',
  'invalid_exact_svm_payload_blockhash_expired',
  'sponsor_rate_limited',
  'insufficient_funds',
  'invalid_exact_svm_transaction_simulation_failed',
  // settle only
  'transaction_failed',
  'transaction_expired',
] as const;
export type SolanaSponsorReason = (typeof SOLANA_SPONSOR_REASONS)[number];

export interface SolanaSponsorOptions {
  rpcUrl: string;
  /**
   * The sponsor's key: the 64-byte Solana keypair (32-byte seed then public key, the
   * `solana-keygen` id.json layout), or the 32-byte seed alone.
   */
  secretKey: Uint8Array;
  /** The v1 network label the redemption store keys on: `mainnet`, `localnet`, ... */
  network: string;
  /**
   * CAIP-2 id (`solana:<first 32 characters of the genesis hash>`). Given: the node's genesis
   * is checked against it before the first check or settle (a mismatch is ChainUnavailableError).
   * Absent: derived from the node's genesis hash when the sponsor is created.
   */
  caip2?: string;
  /** The only mint sponsored. Default mainnet USDC. Owned by the classic SPL Token program. */
  mint?: string;
  /** The mint's decimals. Default 6. */
  decimals?: number;
  /** The commitment settle waits for. Default `confirmed`. */
  commitment?: 'confirmed' | 'finalized';
  /** Per RPC call, ms. Default 10 s. */
  timeoutMs?: number;
  /** Highest compute-unit price accepted, micro-lamports per CU. Default 1,000,000; at most 5,000,000. */
  maxComputeUnitPrice?: bigint | number;
  /** Highest compute-unit limit accepted. Default 50,000. */
  maxComputeUnitLimit?: number;
  /** How long settle waits for the commitment before throwing ChainUnavailableError (still pending). Default 60 s. */
  confirmTimeoutMs?: number;
  /** Status poll interval while confirming, ms. Default 500. */
  pollIntervalMs?: number;
  /** How often an unconfirmed transaction is sent again while its blockhash is valid, ms. Default 2 s. */
  resendIntervalMs?: number;
  /** Distinct transactions sponsored per payer per minute (checked in `check`). Default: no limit. */
  maxPerPayerPerMinute?: number;
  /** A limiter of one's own instead (shared by several sponsors, other window, tests). */
  rateLimiter?: PayerRateLimiter;
}

export interface SolanaSponsor extends ExactV2Scheme {
  readonly chain: 'solana';
  /** The fee payer's address (base58): `extra.feePayer`. */
  readonly address: string;
  /** The fee payer's SOL, for monitoring. Throws ChainUnavailableError when the node cannot be asked. */
  balanceLamports(): Promise<bigint>;
}

type TxErr = unknown;
type Refusal = { ok: false; reason: SolanaSponsorReason; message: string };

const refuse = (reason: SolanaSponsorReason, message: string): Refusal => ({ ok: false, reason, message });

/** What settle needs; made only by check, so settle can trust it. */
class SponsoredTransaction {
  readonly owner: object;
  readonly transaction: Transaction;
  readonly sponsorSignature: SignatureBytes;
  readonly txId: string;
  readonly blockhash: string;
  constructor(
    owner: object,
    transaction: Transaction,
    sponsorSignature: SignatureBytes,
    txId: string,
    blockhash: string,
  ) {
    this.owner = owner;
    this.transaction = transaction;
    this.sponsorSignature = sponsorSignature;
    this.txId = txId;
    this.blockhash = blockhash;
  }
}

const LEVEL = { processed: 0, confirmed: 1, finalized: 2 } as const;

const json = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));

function u32(data: Uint8Array, at: number): number {
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(at, true);
}
function u64(data: Uint8Array, at: number): bigint {
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(at, true);
}

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The transaction error a simulation or a preflight reported, as the payer's or the sponsor's problem. */
type Classified =
  | { kind: 'already_processed' }
  | { kind: 'blockhash_not_found' }
  | { kind: 'sponsor_funds'; message: string }
  | { kind: 'refused'; reason: SolanaSponsorReason; message: string };

function classify(err: TxErr, where: string): Classified {
  if (err === 'AlreadyProcessed') return { kind: 'already_processed' };
  if (err === 'BlockhashNotFound') return { kind: 'blockhash_not_found' };
  const text = `${where}: ${json(err)}`;
  // Only the fee payer pays fees and rent here, so these are the sponsor's, not the payer's.
  if (
    err === 'InsufficientFundsForFee' ||
    err === 'AccountNotFound' ||
    (err !== null && typeof err === 'object' && 'InsufficientFundsForRent' in err)
  ) {
    return { kind: 'sponsor_funds', message: text };
  }
  const ix =
    err !== null && typeof err === 'object' ? (err as { InstructionError?: unknown }).InstructionError : null;
  if (Array.isArray(ix) && Number(ix[0]) === TRANSFER_INDEX) {
    const inner = ix[1] as { Custom?: unknown } | null;
    if (inner && typeof inner === 'object' && Number(inner.Custom) === TOKEN_ERROR_INSUFFICIENT_FUNDS) {
      return { kind: 'refused', reason: 'insufficient_funds', message: text };
    }
  }
  return { kind: 'refused', reason: 'invalid_exact_svm_transaction_simulation_failed', message: text };
}

interface RpcReply {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/**
 * Creates the sponsor. Async: it imports the key, and without `caip2` it asks the node
 * for its genesis hash (ChainUnavailableError when the node cannot be reached).
 */
export async function createSolanaSponsor(opts: SolanaSponsorOptions): Promise<SolanaSponsor> {
  const signer = await importKey(opts.secretKey);
  const sponsor = signer.address;
  const mint = opts.mint ?? USDC_SOLANA_MINT;
  if (!isAddress(mint)) throw new TypeError(`mint ${mint} is not a Solana address`);
  const decimals = opts.decimals ?? 6;
  if (!(Number.isInteger(decimals) && decimals >= 0 && decimals <= 255)) {
    throw new RangeError(`decimals must be an integer within 0..255, got ${decimals}`);
  }
  const commitment = opts.commitment ?? 'confirmed';
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxPrice = BigInt(opts.maxComputeUnitPrice ?? DEFAULT_MAX_COMPUTE_UNIT_PRICE);
  if (maxPrice < 0n || maxPrice > X402_MAX_COMPUTE_UNIT_PRICE) {
    throw new RangeError(
      `maxComputeUnitPrice must be within 0..${X402_MAX_COMPUTE_UNIT_PRICE}, got ${maxPrice}`,
    );
  }
  const maxLimit = opts.maxComputeUnitLimit ?? DEFAULT_MAX_COMPUTE_UNIT_LIMIT;
  if (!(Number.isSafeInteger(maxLimit) && maxLimit >= 1)) {
    throw new RangeError(`maxComputeUnitLimit must be a positive integer, got ${maxLimit}`);
  }
  const confirmTimeoutMs = opts.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
  const pollIntervalMs = opts.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const resendIntervalMs = opts.resendIntervalMs ?? DEFAULT_RESEND_INTERVAL_MS;
  const limiter =
    opts.rateLimiter ??
    (opts.maxPerPayerPerMinute === undefined
      ? null
      : createPayerRateLimiter({ maxPerWindow: opts.maxPerPayerPerMinute, windowMs: 60_000 }));

  const rpc = createSolanaRpc(opts.rpcUrl);
  let rpcId = 0;

  const ask = <T>(what: string, call: (signal: AbortSignal) => Promise<T>): Promise<T> =>
    askChain('solana', what, timeoutMs, call);

  /**
   * A plain JSON-RPC call, for the two methods whose errors must be read as the node wrote
   * them (kit folds a preflight failure's `err` into a nested error and drops the message).
   * Transport trouble and non-JSON answers throw ChainUnavailableError; a JSON-RPC error is returned.
   */
  async function raw(method: string, params: unknown[]): Promise<RpcReply> {
    return ask(method, async (signal) => {
      const res = await fetch(opts.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
        signal,
      });
      const text = await res.text();
      let body: RpcReply;
      try {
        body = JSON.parse(text) as RpcReply;
      } catch {
        throw new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`);
      }
      if (!body || typeof body !== 'object') throw new Error(`HTTP ${res.status}: not a JSON-RPC answer`);
      if (body.error) {
        const { code, message, data } = body.error;
        return { error: { code: Number(code), message: String(message), data } };
      }
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      return { result: body.result };
    });
  }

  let caip2 = opts.caip2;
  let networkChecked = false;
  if (caip2 === undefined) {
    const genesis = await ask('getGenesisHash', (abortSignal) => rpc.getGenesisHash().send({ abortSignal }));
    caip2 = solanaCaip2(genesis);
    networkChecked = true;
  } else if (!/^solana:[1-9A-HJ-NP-Za-km-z]{32}$/.test(caip2)) {
    throw new TypeError(`caip2 must be solana:<32 base58 characters>, got ${caip2}`);
  }
  const expectedCaip2 = caip2;

  async function ensureNetwork(): Promise<void> {
    if (networkChecked) return;
    const genesis = await ask('getGenesisHash', (abortSignal) => rpc.getGenesisHash().send({ abortSignal }));
    if (solanaCaip2(genesis) !== expectedCaip2) {
      throw new ChainUnavailableError(
        'solana',
        `the Solana node at ${opts.rpcUrl} has genesis ${genesis}, not ${expectedCaip2} (${opts.network})`,
      );
    }
    networkChecked = true;
  }

  const ataOf = async (owner: string): Promise<string> =>
    (
      await findAssociatedTokenPda({
        owner: address(owner),
        mint: address(mint),
        tokenProgram: address(SPL_TOKEN_PROGRAM),
      })
    )[0];

  async function signatureStatus(txId: string) {
    const { value } = await ask('getSignatureStatuses', (abortSignal) =>
      rpc.getSignatureStatuses([txId as Signature], { searchTransactionHistory: true }).send({ abortSignal }),
    );
    if (!Array.isArray(value))
      throw new ChainUnavailableError('solana', 'malformed getSignatureStatuses answer');
    return value[0] ?? null;
  }

  const self: SolanaSponsor = {
    chain: 'solana',
    network: opts.network,
    caip2: expectedCaip2,
    address: sponsor,

    extra(memo) {
      return { feePayer: sponsor, memo };
    },

    async balanceLamports() {
      const { value } = await ask('getBalance', (abortSignal) =>
        rpc.getBalance(sponsor, { commitment }).send({ abortSignal }),
      );
      return value;
    },

    async check(payload, expected, opts) {
      const decoded = await inspect(payload, expected);
      if (!decoded.ok) return decoded;
      const { transaction, payer, txId, sponsorSignature, blockhash } = decoded;
      if (opts?.simulate === false) {
        // Only the local checks: settlement learns the txId of a payment it may already hold.
        return {
          ok: true,
          txId,
          payer,
          handle: new SponsoredTransaction(self, transaction, sponsorSignature, txId, blockhash),
        };
      }
      if (limiter && !limiter.take(payer, txId)) {
        return refuse(
          'sponsor_rate_limited',
          `payer ${payer} has had too many transactions sponsored recently`,
        );
      }

      await ensureNetwork();
      const wire = getBase64Decoder().decode(getTransactionEncoder().encode(transaction));
      const reply = await raw('simulateTransaction', [
        wire,
        { encoding: 'base64', sigVerify: false, replaceRecentBlockhash: false, commitment: 'confirmed' },
      ]);
      if (reply.error) {
        // The node refused the transaction itself (e.g. it does not sanitize): the payer's problem.
        if (reply.error.code === -32602) {
          return refuse('invalid_exact_svm_transaction_simulation_failed', reply.error.message);
        }
        throw new ChainUnavailableError(
          'solana',
          `simulateTransaction failed: ${reply.error.code} ${reply.error.message}`,
        );
      }
      const value = (reply.result as { value?: { err?: unknown; logs?: unknown } } | null)?.value;
      if (!value || typeof value !== 'object' || !('err' in value)) {
        throw new ChainUnavailableError('solana', 'malformed simulateTransaction answer');
      }
      const accepted: PaymentCheck = {
        ok: true,
        txId,
        payer,
        handle: new SponsoredTransaction(self, transaction, sponsorSignature, txId, blockhash),
      };
      if (value.err === null) return accepted;
      const c = classify(value.err, 'simulation');
      switch (c.kind) {
        case 'already_processed':
          // Only the sponsor can have made this message land: it is this payment, already
          // sent. settle() confirms it by signature (and reports it failed if it failed).
          return accepted;
        case 'blockhash_not_found':
          // Also what a node says of a transaction it processed long ago.
          if ((await signatureStatus(txId)) !== null) return accepted;
          return refuse(
            'invalid_exact_svm_payload_blockhash_expired',
            `the blockhash ${blockhash} is unknown to the node or expired`,
          );
        case 'sponsor_funds':
          throw new ChainUnavailableError(
            'solana',
            `the sponsor ${sponsor} cannot pay the fee (${c.message}); fund it`,
          );
        case 'refused': {
          const logs = Array.isArray(value.logs) ? ` logs: ${value.logs.slice(-5).join(' | ')}` : '';
          return refuse(c.reason, `${c.message}${logs}`);
        }
      }
    },

    async settle(payment) {
      const h = payment.handle;
      if (!(h instanceof SponsoredTransaction) || h.owner !== self || h.txId !== payment.txId) {
        throw new TypeError('settle() takes a payment that this sponsor checked');
      }
      const running = settling.get(h.txId);
      if (running) return running;
      const p = settleOnce(h).finally(() => settling.delete(h.txId));
      settling.set(h.txId, p);
      return p;
    },
  };

  /** settle() calls in flight, so concurrent calls for one payment share one send-and-confirm. */
  const settling = new Map<string, Promise<Settlement>>();

  type Inspected =
    | {
        ok: true;
        transaction: Transaction;
        payer: string;
        txId: string;
        sponsorSignature: SignatureBytes;
        blockhash: string;
      }
    | Refusal;

  /** Every check that needs no RPC: decoding, layout, accounts, signatures. */
  async function inspect(payload: Record<string, unknown>, expected: ExpectedTransfer): Promise<Inspected> {
    const undecodable = (why: string) =>
      refuse('invalid_exact_svm_payload_transaction_could_not_be_decoded', why);
    const b64 = payload?.['transaction'];
    if (typeof b64 !== 'string') return undecodable('payload.transaction must be a base64 string');
    if (b64.length > MAX_PAYLOAD_CHARS) {
      return undecodable(`the transaction is larger than ${MAX_TRANSACTION_BYTES} bytes`);
    }
    if (!STRICT_BASE64.test(b64)) return undecodable('payload.transaction is not base64');

    let transaction: Transaction;
    let message: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>['decode']>;
    try {
      const bytes = new Uint8Array(getBase64Encoder().encode(b64));
      transaction = getTransactionDecoder().decode(bytes);
      // Canonical only: no trailing bytes, nothing the encoder would write differently.
      if (!sameBytes(new Uint8Array(getTransactionEncoder().encode(transaction)), bytes)) {
        return undecodable('the transaction has trailing or non-canonical bytes');
      }
      message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
      const messageBytes = new Uint8Array(getCompiledTransactionMessageEncoder().encode(message));
      if (!sameBytes(messageBytes, new Uint8Array(transaction.messageBytes))) {
        return undecodable('the message has trailing or non-canonical bytes');
      }
    } catch (e) {
      return undecodable(`cannot decode the transaction: ${(e as Error).message}`);
    }
    if (message.version !== 0) {
      return refuse(
        'invalid_exact_svm_payload_unsupported_version',
        `version ${String(message.version)}, not 0`,
      );
    }
    if ((message.addressTableLookups?.length ?? 0) > 0) {
      return refuse(
        'invalid_exact_svm_payload_address_lookup_tables',
        'address lookup tables are not accepted',
      );
    }
    const keys: string[] = [...message.staticAccounts];
    if (new Set(keys).size !== keys.length) return undecodable('an account is listed twice');
    if (keys[0] !== sponsor) {
      return refuse('invalid_exact_svm_fee_payer_mismatch', `the fee payer is ${keys[0]}, not ${sponsor}`);
    }
    const instructions = message.instructions;
    for (const ix of instructions) {
      const indices = ix.accountIndices ?? [];
      if (ix.programAddressIndex >= keys.length || indices.some((i) => i >= keys.length)) {
        return undecodable('an instruction names an account the message does not have');
      }
      if (ix.programAddressIndex === 0 || indices.includes(0)) {
        return refuse(
          'invalid_exact_svm_payload_transaction_fee_payer_transferring_funds',
          'the fee payer appears in an instruction',
        );
      }
    }
    const signers = message.header.numSignerAccounts;
    if (signers > 2) {
      return refuse(
        'invalid_exact_svm_payload_excessive_signers',
        `${signers} signers; only the fee payer and the payer may sign`,
      );
    }
    if (signers < 2) {
      return refuse('invalid_exact_svm_payload_signature_invalid', 'the payer does not sign the transaction');
    }
    const payer = keys[1]!;

    // The layout: [limit, price, transfer, memo].
    const program = (ix: (typeof instructions)[number]) => keys[ix.programAddressIndex];
    const data = (ix: (typeof instructions)[number]) => new Uint8Array(ix.data ?? []);
    const accountsOf = (ix: (typeof instructions)[number]) => (ix.accountIndices ?? []).map((i) => keys[i]!);
    if (instructions.length !== 4) {
      const memos = instructions.filter((ix) => program(ix) === SPL_MEMO_PROGRAM).length;
      return memos !== 1
        ? refuse('invalid_exact_svm_payload_memo_count', `${memos} memos, not 1`)
        : refuse(
            'invalid_exact_svm_payload_transaction_instructions_length',
            `${instructions.length} instructions, not 4`,
          );
    }
    const [limitIx, priceIx, transferIx, memoIx] = instructions as [
      (typeof instructions)[number],
      (typeof instructions)[number],
      (typeof instructions)[number],
      (typeof instructions)[number],
    ];

    const limitData = data(limitIx);
    if (
      program(limitIx) !== COMPUTE_BUDGET_PROGRAM ||
      accountsOf(limitIx).length !== 0 ||
      limitData.length !== 5 ||
      limitData[0] !== IX_SET_COMPUTE_UNIT_LIMIT
    ) {
      return refuse(
        'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction',
        'the first instruction must be SetComputeUnitLimit',
      );
    }
    const units = u32(limitData, 1);
    if (units > maxLimit) {
      return refuse(
        'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high',
        `compute unit limit ${units} is above ${maxLimit}`,
      );
    }
    const priceData = data(priceIx);
    if (
      program(priceIx) !== COMPUTE_BUDGET_PROGRAM ||
      accountsOf(priceIx).length !== 0 ||
      priceData.length !== 9 ||
      priceData[0] !== IX_SET_COMPUTE_UNIT_PRICE
    ) {
      return refuse(
        'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction',
        'the second instruction must be SetComputeUnitPrice',
      );
    }
    const price = u64(priceData, 1);
    if (price > maxPrice) {
      return refuse(
        'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high',
        `compute unit price ${price} micro-lamports is above ${maxPrice}`,
      );
    }

    const transferData = data(transferIx);
    const transferAccounts = accountsOf(transferIx);
    if (
      program(transferIx) !== SPL_TOKEN_PROGRAM ||
      transferData.length !== 10 ||
      transferData[0] !== IX_TRANSFER_CHECKED ||
      transferAccounts.length !== 4
    ) {
      return refuse(
        'invalid_exact_svm_payload_no_transfer_instruction',
        'the third instruction must be an SPL Token TransferChecked with a single authority',
      );
    }
    const [source, txMint, destination, authority] = transferAccounts as [string, string, string, string];
    if (txMint !== mint || expected.asset !== mint) {
      return refuse('invalid_exact_svm_payload_mint_mismatch', `mint ${txMint}, offered ${expected.asset}`);
    }
    const amount = u64(transferData, 1);
    if (amount !== expected.amount) {
      return refuse(
        'invalid_exact_svm_payload_amount_mismatch',
        `amount ${amount}, offered ${expected.amount}`,
      );
    }
    if (transferData[9] !== decimals) {
      return refuse(
        'invalid_exact_svm_payload_decimals_mismatch',
        `decimals ${transferData[9]}, not ${decimals}`,
      );
    }
    if (!isAddress(expected.payTo) || destination !== (await ataOf(expected.payTo))) {
      return refuse(
        'invalid_exact_svm_payload_recipient_mismatch',
        `the destination ${destination} is not the token account of ${expected.payTo}`,
      );
    }
    if (authority !== payer) {
      return refuse(
        'invalid_exact_svm_payload_payer_not_authority',
        `the transfer authority ${authority} is not the payer ${payer}`,
      );
    }
    if (source !== (await ataOf(payer))) {
      return refuse(
        'invalid_exact_svm_payload_source_mismatch',
        `the source ${source} is not the payer's token account`,
      );
    }

    if (program(memoIx) !== SPL_MEMO_PROGRAM) {
      return refuse(
        'invalid_exact_svm_payload_unknown_fourth_instruction',
        'the fourth instruction must be the SPL Memo',
      );
    }
    if (accountsOf(memoIx).some((a) => a !== payer)) {
      return refuse('invalid_exact_svm_payload_unexpected_accounts', 'only the payer may sign the memo');
    }
    let memo: string;
    try {
      memo = new TextDecoder('utf-8', { fatal: true }).decode(data(memoIx));
    } catch {
      return refuse('invalid_exact_svm_payload_memo_mismatch', 'the memo is not UTF-8');
    }
    if (memo !== expected.memo)
      return refuse('invalid_exact_svm_payload_memo_mismatch', 'the memo is not the offer');

    const used = new Set<string>([sponsor]);
    for (const ix of instructions) {
      used.add(program(ix)!);
      for (const a of accountsOf(ix)) used.add(a);
    }
    if (keys.some((k) => !used.has(k))) {
      return refuse(
        'invalid_exact_svm_payload_unexpected_accounts',
        'the message lists accounts no instruction uses',
      );
    }
    if (message.lifetimeToken === ZERO_BLOCKHASH) return undecodable('no recent blockhash');

    // Signatures: the sponsor's slot empty, the payer's present and valid over the message.
    const sigs = transaction.signatures as Record<string, SignatureBytes | null>;
    if (sigs[sponsor] !== null && sigs[sponsor] !== undefined) {
      return refuse(
        'invalid_exact_svm_payload_signature_invalid',
        "the fee payer's signature slot is not empty",
      );
    }
    const payerSig = sigs[payer];
    if (!payerSig) return refuse('invalid_exact_svm_payload_signature_invalid', 'the payer has not signed');
    let valid = false;
    try {
      valid = await verifySignature(
        await getPublicKeyFromAddress(payer as Address),
        payerSig,
        transaction.messageBytes,
      );
    } catch {
      valid = false;
    }
    if (!valid)
      return refuse('invalid_exact_svm_payload_signature_invalid', "the payer's signature does not verify");

    const sponsorSignature = await signBytes(signer.keyPair.privateKey, transaction.messageBytes);
    return {
      ok: true,
      transaction,
      payer,
      txId: getBase58Decoder().decode(sponsorSignature),
      sponsorSignature,
      blockhash: message.lifetimeToken,
    };
  }

  type SendOutcome = { kind: 'sent' } | { kind: 'unavailable'; message: string } | Classified;

  /** One sendTransaction, with preflight (a failing transaction is refused free of charge). */
  async function send(wire: string): Promise<SendOutcome> {
    let reply: RpcReply;
    try {
      reply = await raw('sendTransaction', [
        wire,
        { encoding: 'base64', skipPreflight: false, preflightCommitment: 'confirmed' },
      ]);
    } catch (e) {
      return { kind: 'unavailable', message: (e as Error).message };
    }
    if (!reply.error) return { kind: 'sent' };
    const { code, message, data } = reply.error;
    // However a front words it, a transaction already processed has landed.
    if (/already been processed/i.test(message)) return { kind: 'already_processed' };
    if (code === -32002) {
      const err =
        data && typeof data === 'object' && 'err' in data ? (data as { err: unknown }).err : undefined;
      if (err !== undefined && err !== null) return classify(err, 'preflight');
      if (/blockhash not found/i.test(message)) return { kind: 'blockhash_not_found' };
      return { kind: 'refused', reason: 'invalid_exact_svm_transaction_simulation_failed', message };
    }
    if (code === -32003)
      return { kind: 'refused', reason: 'invalid_exact_svm_payload_signature_invalid', message };
    if (code === -32602) {
      return { kind: 'refused', reason: 'invalid_exact_svm_transaction_simulation_failed', message };
    }
    return { kind: 'unavailable', message: `${code} ${message}` };
  }

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  async function settleOnce(h: SponsoredTransaction): Promise<Settlement> {
    await ensureNetwork();
    const signed: Transaction = {
      ...h.transaction,
      signatures: { ...h.transaction.signatures, [sponsor]: h.sponsorSignature },
    };
    const wire = getBase64Decoder().decode(
      getTransactionEncoder().encode(signed),
    ) as Base64EncodedWireTransaction;

    const first = await send(wire);
    if (first.kind === 'sponsor_funds') {
      throw new ChainUnavailableError(
        'solana',
        `the sponsor ${sponsor} cannot pay the fee (${first.message}); fund it`,
      );
    }
    if (first.kind === 'refused') {
      // Refused at preflight, so not forwarded now; unless an earlier send landed it, it never will.
      if ((await signatureStatus(h.txId)) === null)
        return { ok: false, reason: first.reason, message: first.message };
    }

    // Confirm by signature: poll its status; while unknown and the blockhash is valid, send it again.
    const deadline = Date.now() + confirmTimeoutMs;
    let lastSend = Date.now();
    let failures = 0;
    let expiredSeen = 0;
    let lastProblem = first.kind === 'unavailable' ? first.message : '';
    for (;;) {
      try {
        const status = await signatureStatus(h.txId);
        failures = 0;
        if (status) {
          expiredSeen = 0;
          const level = LEVEL[(status.confirmationStatus ?? 'processed') as keyof typeof LEVEL] ?? 0;
          if (level >= LEVEL.confirmed && status.err !== null) {
            return {
              ok: false,
              reason: 'transaction_failed',
              message: `failed on-chain: ${json(status.err)}`,
            };
          }
          if (level >= LEVEL[commitment]) return { ok: true, txId: h.txId };
        } else {
          const { value: valid } = await ask('isBlockhashValid', (abortSignal) =>
            rpc.isBlockhashValid(h.blockhash as Blockhash, { commitment: 'confirmed' }).send({ abortSignal }),
          );
          if (!valid) {
            // Twice in a row, then one last look: it may have landed just before the blockhash went.
            if (++expiredSeen >= 2 && (await signatureStatus(h.txId)) === null) {
              return {
                ok: false,
                reason: 'transaction_expired',
                message: `blockhash ${h.blockhash} expired before the transaction landed`,
              };
            }
          } else {
            expiredSeen = 0;
            if (Date.now() - lastSend >= resendIntervalMs) {
              lastSend = Date.now();
              const again = await send(wire);
              if (again.kind === 'unavailable') lastProblem = again.message;
            }
          }
        }
      } catch (e) {
        if (!(e instanceof ChainUnavailableError)) throw e;
        lastProblem = e.message;
        if (++failures >= MAX_CONSECUTIVE_RPC_FAILURES) throw e;
      }
      if (Date.now() >= deadline) {
        throw new ChainUnavailableError(
          'solana',
          `transaction ${h.txId} not ${commitment} within ${confirmTimeoutMs} ms${lastProblem ? ` (${lastProblem})` : ''}; settle again later`,
        );
      }
      await sleep(pollIntervalMs);
    }
  }

  return self;
}

async function importKey(secretKey: Uint8Array): Promise<KeyPairSigner> {
  if (!(secretKey instanceof Uint8Array)) throw new TypeError('secretKey must be a Uint8Array');
  // Copies: kit may keep the bytes, and the caller may wipe theirs.
  if (secretKey.length === 64) return createKeyPairSignerFromBytes(Uint8Array.from(secretKey));
  if (secretKey.length === 32) return createKeyPairSignerFromPrivateKeyBytes(Uint8Array.from(secretKey));
  throw new TypeError(
    `secretKey must be the 64-byte keypair or the 32-byte seed, got ${secretKey.length} bytes`,
  );
}
