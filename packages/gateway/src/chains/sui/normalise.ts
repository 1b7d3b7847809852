/**
 * Sui transaction (as `SuiGrpcClient.core.getTransaction` returns it) -> ObservedTransaction.
 * Pure: no I/O, no clock. A node answer that is not shaped like a transaction throws
 * ChainUnavailableError, because a malformed answer is an infrastructure fault, never a
 * verdict on the payment.
 */
import { bcs } from '@mysten/sui/bcs';
import { TransactionDataBuilder } from '@mysten/sui/transactions';
import { fromBase64, normalizeSuiAddress } from '@mysten/sui/utils';
import type { ObservedTransaction } from '../chain.ts';
import { ChainUnavailableError } from '../chain.ts';

/**
 * A balance change. gRPC gives `address` only; older transports (JSON-RPC, GraphQL) give
 * `owner` with its kind. Only address owners count: an `ObjectOwner`'s id is not a wallet.
 * (Over gRPC a coin owned by an object would appear under the object's id, which can only
 * equal a payee's address by a hash collision.)
 */
export interface SuiBalanceChange {
  coinType: string;
  amount: string;
  address?: string;
  owner?: { AddressOwner?: string; ObjectOwner?: string; [kind: string]: unknown } | string;
}

/** The fields of the SDK's `SuiClientTypes.Transaction` that verification reads. */
export interface SuiTransactionBody {
  digest: string;
  status: { success: boolean };
  checkpoint: string | null;
  timestampMs: number | null;
  bcs: Uint8Array;
  balanceChanges: SuiBalanceChange[];
}

export type SuiTransactionResult =
  | { $kind: 'Transaction'; Transaction: SuiTransactionBody }
  | { $kind: 'FailedTransaction'; FailedTransaction: SuiTransactionBody };

function malformed(what: string): ChainUnavailableError {
  return new ChainUnavailableError('sui', `malformed Sui transaction from the node: ${what}`);
}

/** A Pure input read as a BCS `String`: ULEB128 length, then exactly that many bytes of UTF-8. */
export function decodeBcsString(bytes: Uint8Array): string | null {
  let len = 0;
  let shift = 0;
  let i = 0;
  for (;;) {
    if (i >= bytes.length || shift > 28) return null;
    const b = bytes[i++]!;
    len += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) break;
    shift += 7;
  }
  // Canonical ULEB only: a padded length would let two encodings carry one memo.
  if (i > 1 && bytes[i - 1] === 0) return null;
  if (bytes.length - i !== len) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes.subarray(i));
  } catch {
    return null;
  }
}

function addressOf(change: SuiBalanceChange): string | null {
  const { owner } = change;
  if (owner !== undefined) {
    if (typeof owner !== 'object' || owner === null || typeof owner.AddressOwner !== 'string') return null;
    return normalizeSuiAddress(owner.AddressOwner);
  }
  if (typeof change.address !== 'string') throw malformed('balance change without an owner');
  return normalizeSuiAddress(change.address);
}

export function normaliseSuiTransaction(result: SuiTransactionResult): ObservedTransaction {
  const body = result.$kind === 'Transaction' ? result.Transaction : result.FailedTransaction;
  if (!body || typeof body.digest !== 'string') throw malformed('no transaction body');
  if (!(body.bcs instanceof Uint8Array)) throw malformed('no transaction bcs');
  // The digest is the hash of the bytes: a node cannot pass off other bytes under this digest.
  if (TransactionDataBuilder.getDigestFromBytes(body.bcs) !== body.digest) {
    throw malformed('transaction bytes do not hash to the digest');
  }
  let data: ReturnType<typeof bcs.TransactionData.parse>;
  try {
    data = bcs.TransactionData.parse(body.bcs);
  } catch {
    throw malformed('transaction bcs does not decode');
  }
  const sender = normalizeSuiAddress(data.V1.sender);

  const memos: string[] = [];
  const kind = data.V1.kind;
  if (kind.$kind === 'ProgrammableTransaction') {
    for (const input of kind.ProgrammableTransaction.inputs) {
      if (input.$kind !== 'Pure') continue;
      const text = decodeBcsString(fromBase64(input.Pure.bytes));
      if (text !== null) memos.push(text);
    }
  }

  const deltas: ObservedTransaction['deltas'] = [];
  for (const change of body.balanceChanges ?? []) {
    const owner = addressOf(change);
    if (owner === null) continue;
    if (typeof change.amount !== 'string' || !/^-?[0-9]{1,40}$/.test(change.amount)) {
      throw malformed('balance change amount is not an integer');
    }
    if (typeof change.coinType !== 'string') throw malformed('balance change without a coin type');
    deltas.push({ owner, asset: change.coinType, delta: BigInt(change.amount) });
  }

  const timeMs = body.timestampMs;
  return {
    id: body.digest,
    final: body.checkpoint !== null && body.checkpoint !== undefined,
    success: result.$kind === 'Transaction' && body.status?.success === true,
    timeMs: typeof timeMs === 'number' && Number.isFinite(timeMs) ? timeMs : null,
    signers: [sender],
    assetAuthorities: [sender],
    deltas,
    memos,
  };
}
