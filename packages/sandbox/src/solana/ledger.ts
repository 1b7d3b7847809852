/**
 * The chain state behind the sandbox RPC: litesvm (real SPL Token, ATA and Memo
 * programs, real signature checks) plus what litesvm lacks and mainnet has —
 * slots with wall-clock time, a window of valid blockhashes, a transaction history
 * that includes failed-but-included transactions, and commitment levels.
 */
import { createHash } from 'node:crypto';
import type { Address, ReadonlyUint8Array, Signature, Transaction } from '@solana/kit';
import {
  address,
  getBase58Decoder,
  getBase64Decoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getTransactionDecoder,
  lamports,
} from '@solana/kit';
import { Clock, LiteSVM } from 'litesvm';
import type { TransactionErrorJson } from './errors.ts';
import { describeTransactionError, RPC, RpcError, transactionErrorJson } from './errors.ts';
import type { AccountView, TokenAccountState } from './parse.ts';
import { readTokenAccount, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, tokenBalances } from './parse.ts';
import type { ExecutableMessage, ExecutionView, InnerInstructionView } from './record.ts';

export type Commitment = 'processed' | 'confirmed' | 'finalized';

export interface TxRecord {
  signature: string;
  slot: bigint;
  err: TransactionErrorJson | null;
  confirmationStatus: 'confirmed' | 'finalized';
  /** What getTransaction renders from, on demand (rendered bodies are several times larger). */
  view: ExecutionView;
  /** The status cache key (see messageKey): a node knows a transaction by its message too. */
  messageKey: string;
}

/** What simulateTransaction reports (mainnet's `RpcSimulateTransactionResult`, the parts the sandbox has). */
export interface SimulationResult {
  err: TransactionErrorJson | null;
  logs: string[];
  unitsConsumed: bigint;
  /** Set when the caller asked for `replaceRecentBlockhash`. */
  replacementBlockhash?: { blockhash: string; lastValidBlockHeight: bigint };
}

/**
 * A node's status cache knows a processed transaction by its message as well as by its
 * signature, so the same message carrying other signatures (or none yet, as a partially
 * signed one being simulated) is still "already processed".
 */
function messageKey(messageBytes: ReadonlyUint8Array): string {
  return createHash('sha256')
    .update(messageBytes as Uint8Array)
    .digest('base64');
}

/** How many blocks a blockhash stays usable, as on mainnet. */
const BLOCKHASH_LIFETIME = 150n;
const LAMPORTS_PER_SIGNATURE = 5000n;
/** Like a non-archival node, forget the oldest transactions, so long sandbox runs stay flat in memory. */
const MAX_RECORDS = 20_000;

type LiteSvmResult = ReturnType<LiteSVM['sendTransaction']>;
type LiteSvmMeta = ReturnType<Extract<LiteSvmResult, { err(): unknown }>['meta']>;

function metaOf(result: LiteSvmResult): LiteSvmMeta {
  return 'err' in result ? result.meta() : result;
}

export class SolanaLedger {
  readonly svm: LiteSVM;
  slot: bigint;
  blockHeight = 1_000n;
  /** Transactions stay 'confirmed' until finalizeAll() while this is set. */
  holdFinality = false;
  private readonly blockhashes = new Map<string, bigint>();
  private readonly records = new Map<string, TxRecord>();
  /** messageKey -> signature of the processed transaction. */
  private readonly processedMessages = new Map<string, string>();
  private current: string;

  constructor() {
    // The blockhash check is ours: litesvm alone accepts only its very latest hash.
    this.svm = new LiteSVM().withBlockhashCheck(false);
    this.slot = this.svm.getClock().slot;
    this.current = this.svm.latestBlockhash();
    this.blockhashes.set(this.current, this.blockHeight + BLOCKHASH_LIFETIME);
  }

  latestBlockhash(): { blockhash: string; lastValidBlockHeight: bigint } {
    return { blockhash: this.current, lastValidBlockHeight: this.blockhashes.get(this.current)! };
  }

  isBlockhashValid(blockhash: string): boolean {
    const last = this.blockhashes.get(blockhash);
    return last !== undefined && this.blockHeight <= last;
  }

  read(addr: string): AccountView & { lamports: bigint; executable: boolean; space: bigint } {
    const acc = this.svm.getAccount(address(addr));
    if (!acc.exists) return { exists: false, lamports: 0n, executable: false, space: 0n };
    return {
      exists: true,
      programAddress: acc.programAddress,
      data: acc.data,
      lamports: acc.lamports,
      executable: acc.executable,
      space: acc.space,
    };
  }

  setAccount(addr: Address, programAddress: Address, data: Uint8Array, balance?: bigint): void {
    const space = BigInt(data.length);
    this.svm.setAccount({
      address: addr,
      programAddress,
      data,
      executable: false,
      space,
      lamports: lamports(balance ?? this.svm.minimumBalanceForRentExemption(space)),
    });
  }

  /** Token accounts of `owner` (optionally of one mint), by scanning the token programs' accounts. */
  tokenAccountsOf(
    owner: string,
    filter: { mint?: string | null; programs?: string[] } = {},
  ): { pubkey: string; state: TokenAccountState }[] {
    const found: { pubkey: string; state: TokenAccountState }[] = [];
    for (const program of filter.programs ?? [TOKEN_PROGRAM, TOKEN_2022_PROGRAM]) {
      for (const acc of this.svm.getProgramAccounts(address(program))) {
        const state = readTokenAccount({
          exists: true,
          programAddress: acc.programAddress,
          data: acc.data as Uint8Array,
        });
        if (state && state.owner === owner && (!filter.mint || state.mint === filter.mint)) {
          found.push({ pubkey: acc.address, state });
        }
      }
    }
    return found;
  }

  record(signature: string): TxRecord | undefined {
    return this.records.get(signature);
  }

  finalizeAll(): void {
    for (const r of this.records.values()) r.confirmationStatus = 'finalized';
  }

  /**
   * Executes a signed wire transaction. Rejections before execution (bad bytes,
   * bad signature, unknown blockhash, replay, failed preflight) throw an RpcError
   * and leave no trace; execution failures are recorded with `err`, fees charged.
   * A transaction already processed is, as on a real node, answered with its signature
   * when preflight is skipped (the copy is dropped), else with the -32002 preflight error
   * "This transaction has already been processed".
   */
  submit(wire: Uint8Array, opts: { skipPreflight: boolean }): string {
    const { tx, message, signatures } = decodeWire(wire);
    if (signatures.length === 0 || signatures.some((s) => s === null)) {
      throw new RpcError(RPC.signatureVerification, 'Transaction signature verification failure');
    }
    const signed = signatures as string[];
    const signature = signed[0]!;
    const processed = this.processedSignature(signature, tx.messageBytes);
    // A real node forwards without any check when told to skip preflight: a re-sent
    // transaction it has already processed is answered with its signature (and dropped).
    if (processed !== undefined && opts.skipPreflight) return signature;
    // With preflight, as a bank checks: the blockhash's age first, then the status cache.
    if (!this.isBlockhashValid(message.lifetimeToken)) throw preflightError('BlockhashNotFound');
    if (processed !== undefined) throw preflightError('AlreadyProcessed');

    if (!opts.skipPreflight) {
      const sim = this.svm.simulateTransaction(tx);
      if ('err' in sim) throw preflightError(transactionErrorJson(sim.err()), sim.meta());
    }

    const keys = [...message.staticAccounts];
    const read = (a: string) => this.read(a);
    const preBalances = keys.map((k) => read(k).lamports);
    const preTokenBalances = tokenBalances(keys, read);
    const slot = this.slot + 1n;
    const blockTime = Math.floor(Date.now() / 1000);
    const clock = this.svm.getClock();
    this.svm.setClock(
      new Clock(slot, clock.epochStartTimestamp, clock.epoch, clock.leaderScheduleEpoch, BigInt(blockTime)),
    );

    const result = this.svm.sendTransaction(tx);
    const err = 'err' in result ? transactionErrorJson(result.err()) : null;
    // Only a transaction litesvm kept in its history was included (and charged).
    if (
      err !== null &&
      (err === 'AlreadyProcessed' || this.svm.getTransaction(signature as Signature) === null)
    ) {
      throw preflightError(err, metaOf(result));
    }

    const meta = metaOf(result);
    const inner: InnerInstructionView[][] = meta.innerInstructions().map((list) =>
      list.map((ii) => {
        const c = ii.instruction();
        return {
          programIdIndex: c.programIdIndex(),
          accounts: Array.from(c.accounts()),
          data: c.data(),
          stackHeight: ii.stackHeight(),
        };
      }),
    );
    const view: ExecutionView = {
      signatures: signed,
      wireBase64: getBase64Decoder().decode(wire),
      message,
      slot,
      blockTime,
      err,
      fee: LAMPORTS_PER_SIGNATURE * BigInt(message.header.numSignerAccounts),
      preBalances,
      postBalances: keys.map((k) => read(k).lamports),
      preTokenBalances,
      postTokenBalances: tokenBalances(keys, read),
      inner,
      logs: meta.logs(),
      computeUnits: meta.computeUnitsConsumed(),
    };
    const key = messageKey(tx.messageBytes);
    this.records.set(signature, {
      signature,
      slot,
      err,
      confirmationStatus: this.holdFinality ? 'confirmed' : 'finalized',
      view,
      messageKey: key,
    });
    this.processedMessages.set(key, signature);
    if (this.records.size > MAX_RECORDS) {
      const oldest = this.records.values().next().value!;
      this.records.delete(oldest.signature);
      this.processedMessages.delete(oldest.messageKey);
    }
    this.advance(slot);
    return signature;
  }

  /** The signature under which this transaction (or its message) was processed, if it was. */
  private processedSignature(signature: string | null, messageBytes: ReadonlyUint8Array): string | undefined {
    if (signature !== null && this.records.has(signature)) return signature;
    return this.processedMessages.get(messageKey(messageBytes));
  }

  /**
   * simulateTransaction: executes against the current state and keeps nothing. Like a
   * bank it reports BlockhashNotFound / AlreadyProcessed as the result's `err` (not as
   * an RPC error); a signature problem with `sigVerify` is an RPC error, as on mainnet.
   */
  simulate(
    wire: Uint8Array,
    opts: { sigVerify: boolean; replaceRecentBlockhash: boolean },
  ): SimulationResult {
    const decoded = decodeWire(wire);
    const { signatures } = decoded;
    let { tx, message } = decoded;
    if (opts.sigVerify && signatures.some((s) => s === null)) {
      throw new RpcError(RPC.signatureVerification, 'Transaction signature verification failure');
    }
    let replacementBlockhash: SimulationResult['replacementBlockhash'];
    if (opts.replaceRecentBlockhash) {
      replacementBlockhash = this.latestBlockhash();
      const replaced = { ...message, lifetimeToken: replacementBlockhash.blockhash };
      const messageBytes = getCompiledTransactionMessageEncoder().encode(replaced as never);
      tx = { ...tx, messageBytes: messageBytes as Transaction['messageBytes'] };
      message = replaced as ExecutableMessage;
    } else if (!this.isBlockhashValid(message.lifetimeToken)) {
      return { err: 'BlockhashNotFound', logs: [], unitsConsumed: 0n };
    }
    if (this.processedSignature(signatures[0] ?? null, tx.messageBytes) !== undefined) {
      return {
        err: 'AlreadyProcessed',
        logs: [],
        unitsConsumed: 0n,
        ...(replacementBlockhash ? { replacementBlockhash } : {}),
      };
    }
    this.svm.withSigverify(opts.sigVerify);
    let sim: ReturnType<LiteSVM['simulateTransaction']>;
    try {
      sim = this.svm.simulateTransaction(tx);
    } finally {
      this.svm.withSigverify(true);
    }
    const failed = 'err' in sim ? sim : null;
    const err = failed ? transactionErrorJson(failed.err()) : null;
    if (err === 'SignatureFailure') {
      throw new RpcError(RPC.signatureVerification, 'Transaction signature verification failure');
    }
    const meta = sim.meta();
    return {
      err,
      logs: meta.logs(),
      unitsConsumed: meta.computeUnitsConsumed(),
      ...(replacementBlockhash ? { replacementBlockhash } : {}),
    };
  }

  /** Produces `count` empty blocks: time passes, and blockhashes older than 150 blocks expire. */
  advanceBlocks(count: number): void {
    for (let i = 0; i < count; i++) this.advance(this.slot + 1n);
  }

  /** A new block: the next slot, and a fresh blockhash so identical payments differ. */
  private advance(slot: bigint): void {
    this.slot = slot;
    this.blockHeight += 1n;
    this.svm.expireBlockhash();
    this.current = this.svm.latestBlockhash();
    this.blockhashes.set(this.current, this.blockHeight + BLOCKHASH_LIFETIME);
    for (const [hash, last] of this.blockhashes) if (last < this.blockHeight) this.blockhashes.delete(hash);
  }
}

/** Decodes a wire transaction the way a node's sanitizer would, for the versions mainnet runs. */
function decodeWire(wire: Uint8Array): {
  tx: Transaction;
  message: ExecutableMessage;
  signatures: (string | null)[];
} {
  let tx: Transaction;
  let decoded: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>['decode']>;
  try {
    tx = getTransactionDecoder().decode(wire);
    decoded = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  } catch (e) {
    throw new RpcError(RPC.invalidParams, `failed to deserialize transaction: ${(e as Error).message}`);
  }
  if (decoded.version === 1) throw preflightError('UnsupportedVersion');
  const message: ExecutableMessage = decoded;
  if (message.version === 0 && (message.addressTableLookups?.length ?? 0) > 0) {
    throw new RpcError(RPC.invalidParams, 'address lookup tables are not supported by the sandbox');
  }
  const signatures = Object.values(tx.signatures).map((s) => (s ? getBase58Decoder().decode(s) : null));
  return { tx, message, signatures };
}

function preflightError(err: TransactionErrorJson, meta?: LiteSvmMeta): RpcError {
  if (err === 'SignatureFailure') {
    return new RpcError(RPC.signatureVerification, 'Transaction signature verification failure');
  }
  return new RpcError(
    RPC.preflightFailure,
    `Transaction simulation failed: ${describeTransactionError(err)}`,
    {
      err,
      logs: meta ? meta.logs() : [],
      accounts: null,
      unitsConsumed: meta ? meta.computeUnitsConsumed() : 0n,
      returnData: null,
      innerInstructions: null,
    },
  );
}
