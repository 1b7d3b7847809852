/**
 * Ledger records -> the gRPC messages of sui.rpc.v2, filled the way a full node fills
 * them for the fields the SDK reads (ExecutedTransaction, TransactionEffects, Object).
 * Read masks are not applied: every answer carries all the fields below.
 */
import { GrpcTypes } from '@mysten/sui/grpc';
import { COIN_METADATA, coinObjectType } from './constants.ts';
import type { ExecutionOutcome, ObjectChange } from './execute.ts';
import type { Coin } from './objects.ts';
import { syntheticDigest } from './objects.ts';
import type { Plan } from './plan.ts';
import { planToProto } from './plan.ts';

const { ChangedObject_InputObjectState: In, ChangedObject_OutputObjectState: Out } = GrpcTypes;
const { ChangedObject_IdOperation: IdOp, Owner_OwnerKind } = GrpcTypes;

export function timestamp(ms: number): { seconds: bigint; nanos: number } {
  return { seconds: BigInt(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 };
}

function owner(address: string): GrpcTypes.Owner {
  return { kind: Owner_OwnerKind.ADDRESS, address };
}

/** 0x2::coin::Coin<T> as Move BCS: UID (32 bytes) then Balance<T> (u64). */
function coinContents(coin: Coin): Uint8Array {
  const out = new Uint8Array(40);
  out.set(Buffer.from(coin.id.slice(2), 'hex'), 0);
  new DataView(out.buffer).setBigUint64(32, coin.balance, true);
  return out;
}

export function coinObject(coin: Coin): GrpcTypes.Object {
  const type = coinObjectType(coin.coinType);
  return {
    objectId: coin.id,
    version: coin.version,
    digest: coin.digest,
    owner: owner(coin.owner),
    objectType: type,
    hasPublicTransfer: true,
    contents: { name: type, value: coinContents(coin) },
    previousTransaction: coin.previousTransaction,
    storageRebate: 988_000n,
    balance: coin.balance,
  };
}

function changedObject(ch: ObjectChange): GrpcTypes.ChangedObject {
  const { input, output } = ch;
  return {
    objectId: ch.id,
    inputState: input ? In.EXISTS : In.DOES_NOT_EXIST,
    ...(input
      ? { inputVersion: input.version, inputDigest: input.digest, inputOwner: owner(input.owner) }
      : {}),
    outputState: output ? Out.OBJECT_WRITE : Out.DOES_NOT_EXIST,
    ...(output
      ? { outputVersion: output.version, outputDigest: output.digest, outputOwner: owner(output.owner) }
      : {}),
    idOperation: !input ? IdOp.CREATED : !output ? IdOp.DELETED : IdOp.NONE,
    objectType: coinObjectType((input ?? output)!.coinType),
  };
}

export function effects(
  digest: string,
  epoch: bigint,
  outcome: ExecutionOutcome,
): GrpcTypes.TransactionEffects {
  const s = outcome.status;
  const gasChange = outcome.changes.find((c) => c.id === outcome.gasObjectId)!;
  const deps = new Set(outcome.changes.flatMap((c) => (c.input ? [c.input.previousTransaction] : [])));
  return {
    digest: syntheticDigest('effects', digest),
    version: 2,
    status: s.success
      ? { success: true }
      : {
          success: false,
          error: {
            description: s.description,
            kind: s.kind,
            ...(s.command !== null ? { command: BigInt(s.command) } : {}),
            errorDetails: { oneofKind: undefined },
          },
        },
    epoch,
    gasUsed: outcome.gasUsed,
    transactionDigest: digest,
    gasObject: changedObject(gasChange),
    dependencies: [...deps],
    lamportVersion: outcome.lamportVersion,
    changedObjects: outcome.changes.map(changedObject),
    unchangedConsensusObjects: [],
    unchangedLoadedRuntimeObjects: [],
  };
}

export interface ExecutedInput {
  digest: string;
  bytes: Uint8Array;
  plan: Plan;
  outcome: ExecutionOutcome;
  signatures: Uint8Array[];
  checkpoint: bigint | null;
  timestampMs: number | null;
}

export function executedTransaction(t: ExecutedInput, epoch: bigint): GrpcTypes.ExecutedTransaction {
  return {
    digest: t.digest,
    transaction: {
      ...planToProto(t.plan),
      bcs: { name: 'TransactionData', value: t.bytes },
      digest: t.digest,
    },
    signatures: t.signatures.map((value) => ({
      bcs: { name: 'UserSignatureBytes', value },
      signature: { oneofKind: undefined },
    })),
    effects: effects(t.digest, epoch, t.outcome),
    events: { events: [] },
    ...(t.checkpoint !== null ? { checkpoint: t.checkpoint } : {}),
    ...(t.timestampMs !== null ? { timestamp: timestamp(t.timestampMs) } : {}),
    balanceChanges: t.outcome.balanceChanges.map((b) => ({
      address: b.address,
      coinType: b.coinType,
      amount: b.amount.toString(),
    })),
  };
}

export function coinMetadata(coinType: string): GrpcTypes.CoinMetadata | undefined {
  const m = COIN_METADATA[coinType];
  return (
    m && {
      decimals: m.decimals,
      name: m.name,
      symbol: m.symbol,
      description: `${m.name} on the Tollgate sandbox`,
    }
  );
}
