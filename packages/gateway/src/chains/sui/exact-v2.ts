/**
 * x402 v2 `exact` on Sui (DESIGN §4.12): the ExactV2Scheme port for Sui, following the merged
 * x402 spec (`specs/schemes/exact/scheme_exact_sui.md`): the payer builds and signs a COMPLETE
 * transaction and sends `payload = { signature, transaction }` (base64 signature, base64 BCS
 * `TransactionData`); the facilitator — the gateway itself, in-process — checks it and later
 * broadcasts it. The payer pays gas; there is no gas station (no `extra.gasStation`).
 *
 * check (the spec's "verify"):
 * 1. `transaction` decodes as a canonical BCS `TransactionData` V1 programmable transaction;
 *    its digest (the txId, known before it runs) is computed from the bytes.
 * 2. `signature` is a valid signature over the bytes by the transaction's `sender` (the payer).
 * 3. Not already executed: `getTransaction(digest)` must answer not found. (The spec asks for
 *    it; simulation alone is not a replay guard once inputs come from address balances.)
 * 4. Simulated (dry run) successfully on the node.
 * 5. The simulated balance changes (the spec: "`payTo` balance changes by exactly `amount` of
 *    `asset`") — exactly, never "at least".
 *
 * Tollgate's additions (choices the spec leaves open; each has its own reason):
 * - memo: the offer's `extra.memo` must be a Pure string input of the transaction exactly once
 *   (as the v1 Sui verifier reads it), binding the payment to one requirement.
 * - the balance changes must be exactly: `payTo` +amount of `asset`; the sender −amount of
 *   `asset`; the sender −(gas) in SUI, where gas = computation + storage − rebate of the
 *   simulation's effects. Nothing else: no other address gains or loses `asset` (so no
 *   second payee and no one else's coins), no other coin type moves, and no SUI beyond gas.
 * - gas: client-paid only — gas owner = sender, a non-empty gas payment, a non-zero price,
 *   and a budget at most `maxGasBudget` (default 0.1 SUI). Sponsored and "gasless" shapes
 *   are refused.
 * - `payTo` must not be the sender.
 * - expiration: whatever the transaction says is enforced by the node's simulation and
 *   execution; none is required. (Tollgate's client sets `Epoch(current + 1)`.)
 *
 * settle: executed-first (as the spec's later revision recommends): if the digest is already
 * on-chain it is confirmed, never re-sent; otherwise the signed bytes are executed. Either way
 * it waits until the transaction has a checkpoint (the v1 finality rule) and checks the
 * landed balance changes credit `payTo` exactly `amount` of `asset` once more. A node's
 * refusal to execute (e.g. the payer spent the coins since check) is `transaction_rejected`
 * unless the digest turns out to be on-chain (a concurrent settle); an outage or timeout is
 * ChainUnavailableError, since the transaction may have landed: settle again to find out.
 *
 * A checked payment is only as good as the payer's coin versions: the payer can spend them
 * (or sign a second payment with them) before settle, so settle can fail after check passed.
 */
import { bcs } from '@mysten/sui/bcs';
import { TransactionError } from '@mysten/sui/client';
import { parseSerializedSignature } from '@mysten/sui/cryptography';
import { GrpcStatusCode, RpcError, SuiGrpcClient } from '@mysten/sui/grpc';
import { TransactionDataBuilder } from '@mysten/sui/transactions';
import {
  fromBase64,
  isValidSuiAddress,
  normalizeStructTag,
  normalizeSuiAddress,
  toBase64,
} from '@mysten/sui/utils';
import { isValidTransactionSignature } from '@mysten/sui/verify';
import { suiCaip2 } from '@tollgate/protocol';
import { withDeadline } from '../../deadline.ts';
import { ChainUnavailableError } from '../chain.ts';
import type {
  CheckedPayment,
  ExactV2Scheme,
  ExpectedTransfer,
  PaymentCheck,
  Settlement,
} from '../exact-v2.ts';
import { decodeBcsString } from './normalise.ts';

/** Every refusal reason `check` and `settle` give. */
export const SUI_EXACT_V2_REASONS = [
  /** `payload` is not `{ signature, transaction }` with two canonical base64 strings. */
  'invalid_payload',
  'invalid_exact_sui_payload_transaction_could_not_be_decoded',
  'invalid_exact_sui_payload_signature',
  /** Not client-paid gas (sponsored or gasless shape, zero price). */
  'invalid_exact_sui_payload_gas',
  'invalid_exact_sui_payload_gas_budget',
  'invalid_exact_sui_payload_memo_mismatch',
  /** payTo not credited, payTo is the sender, or another address gains or loses the asset. */
  'invalid_exact_sui_payload_recipient_mismatch',
  'invalid_exact_sui_payload_amount_mismatch',
  /** Another coin type moves (or SUI beyond the sender's gas), or the offer names another asset. */
  'invalid_exact_sui_payload_asset_mismatch',
  'transaction_already_executed',
  'simulation_failed',
  /** settle: the node refused to execute it (e.g. its coins were spent since check). Never on-chain. */
  'transaction_rejected',
  /** settle: it ran and failed (the payer paid gas, nothing else moved). */
  'transaction_failed',
] as const;
export type SuiExactV2Reason = (typeof SUI_EXACT_V2_REASONS)[number];

const SUI = normalizeStructTag('0x2::sui::SUI');
/** 0.1 SUI. An SDK-built coin payment needs a few thousandths. */
export const DEFAULT_MAX_GAS_BUDGET = 100_000_000n;

/** The slice of SuiGrpcClient the scheme uses, so tests can pass their own. */
export interface SuiExactV2Client {
  core: {
    getChainIdentifier(opts?: { signal?: AbortSignal }): Promise<{ chainIdentifier: string }>;
    getTransaction(opts: {
      digest: string;
      include: { balanceChanges: true };
      signal?: AbortSignal;
    }): Promise<unknown>;
    simulateTransaction(opts: {
      transaction: Uint8Array;
      include: { balanceChanges: true; effects: true };
      signal?: AbortSignal;
    }): Promise<unknown>;
    executeTransaction(opts: {
      transaction: Uint8Array;
      signatures: string[];
      include: { balanceChanges: true };
      signal?: AbortSignal;
    }): Promise<unknown>;
  };
}

export interface SuiExactV2Options {
  /** gRPC(-web) base URL of a full node, as for the v1 verifier. */
  rpcUrl: string;
  /** The v1 network label the redemption store keys on: `mainnet`, `localnet`. */
  network: string;
  /**
   * CAIP-2 id advertised in `accepts[].network`: `sui:mainnet`, or `suiCaip2(chainId)`. The
   * node must be on that chain (asked once): a misconfigured URL is ChainUnavailableError.
   */
  caip2: string;
  /** The coin type offers are made in (USDC). An offer in another asset is refused. */
  coinType: string;
  /** Per RPC call. Default 10 s. */
  timeoutMs?: number;
  /** How long settle waits for the transaction to be checkpointed. Default 30 s. */
  confirmTimeoutMs?: number;
  /** Ceiling on the transaction's gas budget, MIST. Default 0.1 SUI. */
  maxGasBudget?: bigint;
  client?: SuiExactV2Client;
}

interface Decoded {
  bytes: Uint8Array;
  signature: string;
  digest: string;
  sender: string;
  data: ReturnType<typeof bcs.TransactionData.parse>;
}

/** What check hands settle (CheckedPayment.handle). */
class SuiExactV2Handle {
  readonly digest: string;
  readonly bytes: Uint8Array;
  readonly signature: string;
  readonly payTo: string;
  readonly asset: string;
  readonly amount: bigint;
  constructor(d: Decoded, t: { payTo: string; asset: string; amount: bigint }) {
    this.digest = d.digest;
    this.bytes = d.bytes;
    this.signature = d.signature;
    this.payTo = t.payTo;
    this.asset = t.asset;
    this.amount = t.amount;
  }
}

type Refusal = { ok: false; reason: SuiExactV2Reason; message: string };
const refuse = (reason: SuiExactV2Reason, message: string): Refusal => ({ ok: false, reason, message });

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Canonical base64 only, so one payload has one byte form. */
function base64(value: unknown): Uint8Array | null {
  if (typeof value !== 'string' || value.length === 0 || !BASE64.test(value)) return null;
  const bytes = fromBase64(value);
  return toBase64(bytes) === value ? bytes : null;
}

/**
 * Whether a serialized signature has its scheme's shape: the key-pair schemes need a
 * 64-byte signature (the verifier throws on any other length, which is the payer's
 * fault, not the node's); a signature that does not parse at all is refused too.
 */
function signatureWellFormed(signature: string): boolean {
  try {
    const parsed = parseSerializedSignature(signature);
    switch (parsed.signatureScheme) {
      case 'ED25519':
      case 'Secp256k1':
      case 'Secp256r1':
        return parsed.signature.length === 64;
      default:
        return true;
    }
  } catch {
    return false;
  }
}

/** Pure decoding of `payload`; no I/O. */
function decodePayload(payload: Record<string, unknown>): Decoded | Refusal {
  const bytes = base64(payload.transaction);
  if (!bytes || typeof payload.signature !== 'string' || !base64(payload.signature)) {
    return refuse('invalid_payload', 'payload must be { signature, transaction }, both canonical base64');
  }
  let data: ReturnType<typeof bcs.TransactionData.parse>;
  try {
    data = bcs.TransactionData.parse(bytes);
    // Trailing or non-canonical bytes would give one transaction several digests.
    if (toBase64(bcs.TransactionData.serialize(data).toBytes()) !== payload.transaction) {
      throw new Error('not canonical BCS');
    }
  } catch (e) {
    return refuse(
      'invalid_exact_sui_payload_transaction_could_not_be_decoded',
      `transaction is not BCS TransactionData: ${(e as Error).message}`,
    );
  }
  if (data.V1.kind.$kind !== 'ProgrammableTransaction') {
    return refuse(
      'invalid_exact_sui_payload_transaction_could_not_be_decoded',
      'transaction is not a programmable transaction',
    );
  }
  return {
    bytes,
    signature: payload.signature,
    digest: TransactionDataBuilder.getDigestFromBytes(bytes),
    sender: normalizeSuiAddress(data.V1.sender),
    data,
  };
}

/**
 * The digest a `{ signature, transaction }` payload will have on-chain (its txId), or null if
 * it does not decode. No I/O: lets the caller find an earlier redemption before `check`
 * (which refuses a transaction that already ran).
 */
export function suiExactV2TxId(payload: Record<string, unknown>): string | null {
  const d = decodePayload(payload);
  return 'ok' in d ? null : d.digest;
}

function memoCount(data: Decoded['data'], memo: string): number {
  const kind = data.V1.kind;
  if (kind.$kind !== 'ProgrammableTransaction') return 0;
  let n = 0;
  for (const input of kind.ProgrammableTransaction.inputs) {
    if (input.$kind === 'Pure' && decodeBcsString(fromBase64(input.Pure.bytes)) === memo) n++;
  }
  return n;
}

export interface SuiBalanceChangeLine {
  address: string;
  coinType: string;
  amount: bigint;
}

/**
 * The balance-change rule (pure): exactly `payTo` +amount of `asset`, the sender −amount of
 * `asset`, the sender −gas in SUI, and nothing else. Addresses and coin types must already be
 * normalised. Returns null when it holds.
 */
export function judgeBalanceChanges(
  changes: SuiBalanceChangeLine[],
  t: { sender: string; payTo: string; asset: string; amount: bigint; gas: bigint },
): Refusal | null {
  const key = (address: string, coinType: string) => `${address}|${coinType}`;
  const observed = new Map<string, bigint>();
  for (const c of changes) {
    const k = key(c.address, c.coinType);
    observed.set(k, (observed.get(k) ?? 0n) + c.amount);
  }
  const get = (address: string, coinType: string) => observed.get(key(address, coinType)) ?? 0n;

  for (const [k, amount] of observed) {
    if (amount === 0n) continue;
    const [address, coinType] = k.split('|') as [string, string];
    if (coinType === t.asset) {
      if (address !== t.sender && address !== t.payTo) {
        return refuse(
          'invalid_exact_sui_payload_recipient_mismatch',
          `the transaction also changes the ${coinType} balance of ${address} (by ${amount})`,
        );
      }
    } else if (!(coinType === SUI && address === t.sender)) {
      return refuse(
        'invalid_exact_sui_payload_asset_mismatch',
        `the transaction also moves ${coinType} (${address} by ${amount}); only ${t.asset} may move`,
      );
    }
  }
  const credited = get(t.payTo, t.asset);
  if (credited === 0n) {
    return refuse('invalid_exact_sui_payload_recipient_mismatch', `payTo ${t.payTo} receives no ${t.asset}`);
  }
  if (credited !== t.amount) {
    return refuse(
      'invalid_exact_sui_payload_amount_mismatch',
      `payTo receives ${credited} atomic units, not exactly ${t.amount}`,
    );
  }
  const debited = get(t.sender, t.asset) + (t.asset === SUI ? t.gas : 0n);
  if (debited !== -t.amount) {
    return refuse(
      'invalid_exact_sui_payload_amount_mismatch',
      `the sender's ${t.asset} changes by ${debited}, not exactly -${t.amount}`,
    );
  }
  if (t.asset !== SUI && get(t.sender, SUI) !== -t.gas) {
    return refuse(
      'invalid_exact_sui_payload_asset_mismatch',
      `the sender's SUI changes by ${get(t.sender, SUI)}, not by the gas alone (-${t.gas})`,
    );
  }
  return null;
}

function malformed(what: string): ChainUnavailableError {
  return new ChainUnavailableError('sui', `malformed answer from the Sui node: ${what}`);
}

interface Executed {
  success: boolean;
  error: string | null;
  checkpoint: boolean;
  changes: SuiBalanceChangeLine[];
  gas: bigint | null;
}

/** A core-API TransactionResult / SimulateTransactionResult, read defensively. */
function readResult(result: unknown): Executed {
  const r = result as { $kind?: string; Transaction?: unknown; FailedTransaction?: unknown } | null;
  const body = (r?.$kind === 'Transaction' ? r.Transaction : r?.FailedTransaction) as
    | {
        status?: { success?: boolean; error?: { message?: string } | null };
        checkpoint?: string | null;
        balanceChanges?: { coinType?: unknown; address?: unknown; amount?: unknown }[];
        effects?: {
          gasUsed?: { computationCost?: unknown; storageCost?: unknown; storageRebate?: unknown };
        } | null;
      }
    | undefined;
  if (!body || typeof body !== 'object') throw malformed('no transaction in the answer');
  const changes: SuiBalanceChangeLine[] = [];
  for (const c of body.balanceChanges ?? []) {
    if (typeof c.amount !== 'string' || !/^-?[0-9]{1,40}$/.test(c.amount)) {
      throw malformed('balance change amount is not an integer');
    }
    if (typeof c.address !== 'string' || typeof c.coinType !== 'string') {
      throw malformed('balance change without address or coin type');
    }
    let coinType: string;
    try {
      coinType = normalizeStructTag(c.coinType);
    } catch {
      throw malformed(`balance change coin type ${c.coinType}`);
    }
    changes.push({ address: normalizeSuiAddress(c.address), coinType, amount: BigInt(c.amount) });
  }
  let gas: bigint | null = null;
  const used = body.effects?.gasUsed;
  if (used) {
    const n = (v: unknown) => {
      if (typeof v !== 'string' || !/^[0-9]{1,30}$/.test(v)) throw malformed('gas summary');
      return BigInt(v);
    };
    gas = n(used.computationCost) + n(used.storageCost) - n(used.storageRebate);
  }
  const success = r?.$kind === 'Transaction' && body.status?.success === true;
  return {
    success,
    error: success ? null : (body.status?.error?.message ?? 'transaction failed'),
    checkpoint: body.checkpoint !== null && body.checkpoint !== undefined,
    changes,
    gas,
  };
}

function isNotFound(e: unknown): boolean {
  if (e instanceof TransactionError && e.reason === 'notFound') return true;
  return e instanceof RpcError && e.code === GrpcStatusCode[GrpcStatusCode.NOT_FOUND];
}

/** A node's definite "no" to a transaction (as opposed to an outage or a timeout). */
const REFUSAL_CODES = new Set(
  [
    GrpcStatusCode.INVALID_ARGUMENT,
    GrpcStatusCode.FAILED_PRECONDITION,
    GrpcStatusCode.NOT_FOUND,
    GrpcStatusCode.PERMISSION_DENIED,
  ].map((c) => GrpcStatusCode[c]),
);
const isRefusal = (e: unknown): e is RpcError => e instanceof RpcError && REFUSAL_CODES.has(e.code);

function describe(e: unknown): string {
  if (e instanceof RpcError) return `${e.code}: ${e.message}`;
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * @example
 * createSuiExactV2({
 *   rpcUrl: 'https://fullnode.mainnet.sui.io:443', network: 'mainnet', caip2: 'sui:mainnet',
 *   coinType: USDC_SUI_COIN_TYPE,
 * })
 */
export function createSuiExactV2(opts: SuiExactV2Options): ExactV2Scheme & { readonly coinType: string } {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const confirmTimeoutMs = opts.confirmTimeoutMs ?? 30_000;
  const maxGasBudget = opts.maxGasBudget ?? DEFAULT_MAX_GAS_BUDGET;
  const coinType = normalizeStructTag(opts.coinType);
  const grpc = opts.client ? undefined : new SuiGrpcClient({ network: opts.network, baseUrl: opts.rpcUrl });
  const client: SuiExactV2Client = opts.client ?? (grpc as SuiExactV2Client);
  let chainChecked = false;

  async function checkChain(): Promise<void> {
    if (chainChecked) return;
    let id: string;
    try {
      id = (await withDeadline(timeoutMs, (signal) => client.core.getChainIdentifier({ signal })))
        .chainIdentifier;
    } catch (e) {
      throw new ChainUnavailableError('sui', `Sui chain identifier: ${describe(e)}`, { cause: e });
    }
    if (suiCaip2(id) !== opts.caip2) {
      throw new ChainUnavailableError(
        'sui',
        `the Sui node at ${opts.rpcUrl} is on ${suiCaip2(id)}, not ${opts.caip2} (${opts.network})`,
      );
    }
    chainChecked = true;
  }

  /** The transaction as the node has it, or null if it has not run. */
  async function lookup(digest: string): Promise<Executed | null> {
    let result: unknown;
    try {
      result = await withDeadline(timeoutMs, (signal) =>
        client.core.getTransaction({ digest, include: { balanceChanges: true }, signal }),
      );
    } catch (e) {
      if (isNotFound(e)) return null;
      throw new ChainUnavailableError('sui', `Sui getTransaction failed: ${describe(e)}`, { cause: e });
    }
    return readResult(result);
  }

  /** Polls until the transaction is checkpointed; throws ChainUnavailableError at the deadline. */
  async function confirm(digest: string, first: Executed | null): Promise<Executed> {
    const deadline = Date.now() + confirmTimeoutMs;
    let last: Executed | null = first;
    let lastError: unknown = null;
    let wait = 100;
    for (;;) {
      if (last?.checkpoint) return last;
      if (Date.now() >= deadline) break;
      await sleep(Math.min(wait, Math.max(0, deadline - Date.now())));
      wait = Math.min(wait * 2, 1000);
      try {
        last = (await lookup(digest)) ?? last;
      } catch (e) {
        lastError = e;
      }
    }
    throw new ChainUnavailableError(
      'sui',
      `Sui transaction ${digest} ${last ? 'has no checkpoint' : 'is not visible'} after ${confirmTimeoutMs} ms` +
        (lastError ? ` (${describe(lastError)})` : ''),
      lastError ? { cause: lastError } : undefined,
    );
  }

  function landedAsChecked(digest: string, landed: Executed, h: SuiExactV2Handle): Settlement {
    if (!landed.success) {
      return refuse('transaction_failed', `Sui transaction ${digest} failed: ${landed.error}`);
    }
    const credited = landed.changes
      .filter((c) => c.address === h.payTo && c.coinType === h.asset)
      .reduce((s, c) => s + c.amount, 0n);
    if (credited !== h.amount) {
      return refuse(
        'invalid_exact_sui_payload_amount_mismatch',
        `Sui transaction ${digest} credited payTo ${credited}, not ${h.amount}`,
      );
    }
    return { ok: true, txId: digest };
  }

  return {
    chain: 'sui',
    network: opts.network,
    caip2: opts.caip2,
    coinType,
    extra(memo: string) {
      return { memo };
    },

    /**
     * `simulate: false` makes only the checks that need no node (decoding, gas shape, memo,
     * signature): it gives the txId and a handle settle can use for a payload that may
     * already have been claimed or settled, whose simulation would now fail.
     */
    async check(
      payload: Record<string, unknown>,
      expected: ExpectedTransfer,
      checkOpts: { simulate?: boolean } = {},
    ): Promise<PaymentCheck> {
      const d = decodePayload(payload);
      if ('ok' in d) return d;
      const { data, sender, digest } = d;

      let asset: string;
      try {
        asset = normalizeStructTag(expected.asset);
      } catch {
        asset = '';
      }
      if (asset !== coinType) {
        return refuse('invalid_exact_sui_payload_asset_mismatch', `only ${coinType} is accepted`);
      }
      const payTo = /^0x[0-9a-fA-F]{1,64}$/.test(expected.payTo) ? normalizeSuiAddress(expected.payTo) : '';
      if (!isValidSuiAddress(payTo) || payTo === sender) {
        return refuse(
          'invalid_exact_sui_payload_recipient_mismatch',
          'payTo is not a Sui address or is the payer',
        );
      }
      if (expected.amount <= 0n) {
        return refuse('invalid_exact_sui_payload_amount_mismatch', 'nothing to pay');
      }

      const gas = data.V1.gasData;
      if (gas.owner === null || normalizeSuiAddress(gas.owner) !== sender) {
        return refuse('invalid_exact_sui_payload_gas', 'gas must be paid by the sender (no sponsorship)');
      }
      if (gas.payment === null || gas.payment.length === 0 || BigInt(gas.price) === 0n) {
        return refuse('invalid_exact_sui_payload_gas', 'gas must be paid with the sender’s own SUI coins');
      }
      if (BigInt(gas.budget) > maxGasBudget) {
        return refuse(
          'invalid_exact_sui_payload_gas_budget',
          `gas budget ${gas.budget} MIST is over the limit of ${maxGasBudget}`,
        );
      }
      const memos = expected.memo ? memoCount(data, expected.memo) : 0;
      if (memos !== 1) {
        return refuse(
          'invalid_exact_sui_payload_memo_mismatch',
          memos === 0
            ? 'the memo is not a Pure string input of the transaction'
            : `the memo appears ${memos} times; exactly once is required`,
        );
      }

      if (!signatureWellFormed(d.signature)) {
        return refuse(
          'invalid_exact_sui_payload_signature',
          'the signature is not a well-formed Sui signature',
        );
      }
      let valid: boolean;
      try {
        valid = await isValidTransactionSignature(d.bytes, d.signature, {
          address: sender,
          ...(grpc ? { client: grpc } : {}),
        });
      } catch (e) {
        // Only environmental failures throw (e.g. a zkLogin key lookup).
        throw new ChainUnavailableError('sui', `Sui signature check failed: ${describe(e)}`, { cause: e });
      }
      if (!valid) {
        return refuse('invalid_exact_sui_payload_signature', `the signature is not the sender's (${sender})`);
      }

      const handle = new SuiExactV2Handle(d, { payTo, asset, amount: expected.amount });
      if (checkOpts.simulate === false) return { ok: true, txId: digest, payer: sender, handle };

      await checkChain();
      if (await lookup(digest)) {
        return refuse('transaction_already_executed', `Sui transaction ${digest} has already been executed`);
      }
      let sim: Executed;
      try {
        sim = readResult(
          await withDeadline(timeoutMs, (signal) =>
            client.core.simulateTransaction({
              transaction: d.bytes,
              include: { balanceChanges: true, effects: true },
              signal,
            }),
          ),
        );
      } catch (e) {
        if (e instanceof ChainUnavailableError) throw e;
        if (isRefusal(e))
          return refuse('simulation_failed', `the node refuses the transaction: ${e.message}`);
        throw new ChainUnavailableError('sui', `Sui simulateTransaction failed: ${describe(e)}`, {
          cause: e,
        });
      }
      if (!sim.success) return refuse('simulation_failed', `the transaction would fail: ${sim.error}`);
      if (sim.gas === null) throw malformed('simulation without a gas summary');

      const verdict = judgeBalanceChanges(sim.changes, {
        sender,
        payTo,
        asset,
        amount: expected.amount,
        gas: sim.gas,
      });
      if (verdict) return verdict;
      return { ok: true, txId: digest, payer: sender, handle };
    },

    async settle(payment: CheckedPayment): Promise<Settlement> {
      const h = payment.handle;
      if (!(h instanceof SuiExactV2Handle) || h.digest !== payment.txId) {
        throw new TypeError('not a payment checked by this Sui scheme');
      }
      const digest = h.digest;
      await checkChain();

      // Executed-first: a transaction that already ran is confirmed, never sent again.
      let landed = await lookup(digest);
      if (!landed) {
        try {
          landed = readResult(
            await withDeadline(timeoutMs, (signal) =>
              client.core.executeTransaction({
                transaction: h.bytes,
                signatures: [h.signature],
                include: { balanceChanges: true },
                signal,
              }),
            ),
          );
        } catch (e) {
          if (e instanceof ChainUnavailableError) throw e;
          if (!isRefusal(e)) {
            // Timeout or outage: it may have landed. Settling again later finds out.
            throw new ChainUnavailableError('sui', `Sui executeTransaction failed: ${describe(e)}`, {
              cause: e,
            });
          }
          // Refused — unless it is refused because it already ran (a concurrent settle).
          landed = await lookup(digest);
          if (!landed) return refuse('transaction_rejected', `the node refused ${digest}: ${e.message}`);
        }
        if (!landed.success) return landedAsChecked(digest, landed, h);
      }
      return landedAsChecked(digest, await confirm(digest, landed), h);
    },
  };
}
