/**
 * The subset of a Sui programmable transaction the sandbox can run, in one shape for
 * both entry points: signed BCS bytes (ExecuteTransaction) and the gRPC `Transaction`
 * message the SDK sends while building (SimulateTransaction). Anything outside the
 * subset is refused up front with `Unsupported`, never half-executed.
 */
import { bcs } from '@mysten/sui/bcs';
import { GrpcTypes } from '@mysten/sui/grpc';
import { fromBase64, normalizeSuiAddress } from '@mysten/sui/utils';
import type { ObjectRef } from './objects.ts';

export type Arg =
  | { kind: 'gas' }
  | { kind: 'input'; index: number }
  | { kind: 'result'; index: number; sub?: number };

export type Command =
  | { kind: 'split'; coin: Arg; amounts: Arg[] }
  | { kind: 'merge'; destination: Arg; sources: Arg[] }
  | { kind: 'transfer'; objects: Arg[]; address: Arg };

/** An object input before resolution carries only its id (the SDK resolves through simulation). */
export type Input =
  | { kind: 'pure'; bytes: Uint8Array }
  | { kind: 'object'; objectId: string; ref?: ObjectRef };

export type Expiration = { kind: 'none' } | { kind: 'epoch'; epoch: bigint };

export interface Plan {
  sender: string;
  gas: { payment: ObjectRef[]; owner: string | null; price: bigint | null; budget: bigint | null };
  expiration: Expiration;
  inputs: Input[];
  commands: Command[];
}

/** A transaction the sandbox refuses before execution (maps to gRPC INVALID_ARGUMENT). */
export class Rejected extends Error {
  override readonly name = 'Rejected';
}

type BcsArg = ReturnType<typeof bcs.Argument.parse>;

function fromBcsArg(a: BcsArg): Arg {
  if (a.$kind === 'GasCoin') return { kind: 'gas' };
  if (a.$kind === 'Input') return { kind: 'input', index: a.Input };
  if (a.$kind === 'Result') return { kind: 'result', index: a.Result };
  return { kind: 'result', index: a.NestedResult[0], sub: a.NestedResult[1] };
}

/** Signed transaction bytes -> Plan. Throws Rejected for malformed or unsupported data. */
export function planFromBcs(bytes: Uint8Array): Plan {
  let data: ReturnType<typeof bcs.TransactionData.parse>;
  try {
    data = bcs.TransactionData.parse(bytes);
  } catch (e) {
    throw new Rejected(`transaction bytes do not decode: ${(e as Error).message}`);
  }
  const v1 = data.V1;
  if (v1.kind.$kind !== 'ProgrammableTransaction')
    throw new Rejected('only programmable transactions are supported');
  const ptb = v1.kind.ProgrammableTransaction;
  const inputs: Input[] = ptb.inputs.map((input): Input => {
    if (input.$kind === 'Pure') return { kind: 'pure', bytes: fromBase64(input.Pure.bytes) };
    if (input.$kind === 'Object' && input.Object.$kind === 'ImmOrOwnedObject') {
      const r = input.Object.ImmOrOwnedObject;
      const ref = { objectId: normalizeSuiAddress(r.objectId), version: BigInt(r.version), digest: r.digest };
      return { kind: 'object', objectId: ref.objectId, ref };
    }
    throw new Rejected(`the sandbox does not support ${input.$kind} inputs`);
  });
  const commands = ptb.commands.map((c): Command => {
    if (c.$kind === 'SplitCoins') {
      return {
        kind: 'split',
        coin: fromBcsArg(c.SplitCoins.coin),
        amounts: c.SplitCoins.amounts.map(fromBcsArg),
      };
    }
    if (c.$kind === 'MergeCoins') {
      return {
        kind: 'merge',
        destination: fromBcsArg(c.MergeCoins.destination),
        sources: c.MergeCoins.sources.map(fromBcsArg),
      };
    }
    if (c.$kind === 'TransferObjects') {
      return {
        kind: 'transfer',
        objects: c.TransferObjects.objects.map(fromBcsArg),
        address: fromBcsArg(c.TransferObjects.address),
      };
    }
    throw new Rejected(`the sandbox does not support ${c.$kind} commands`);
  });
  let expiration: Expiration;
  if (v1.expiration.$kind === 'None') expiration = { kind: 'none' };
  else if (v1.expiration.$kind === 'Epoch')
    expiration = { kind: 'epoch', epoch: BigInt(v1.expiration.Epoch) };
  else throw new Rejected(`the sandbox does not support ${v1.expiration.$kind} expiration`);
  return {
    sender: normalizeSuiAddress(v1.sender),
    gas: {
      payment: v1.gasData.payment.map((p) => ({
        objectId: normalizeSuiAddress(p.objectId),
        version: BigInt(p.version),
        digest: p.digest,
      })),
      owner: normalizeSuiAddress(v1.gasData.owner),
      price: BigInt(v1.gasData.price),
      budget: BigInt(v1.gasData.budget),
    },
    expiration,
    inputs,
    commands,
  };
}

const { Argument_ArgumentKind: AK, Input_InputKind: IK } = GrpcTypes;
const EK = GrpcTypes.TransactionExpiration_TransactionExpirationKind;

function fromProtoArg(a: GrpcTypes.Argument | undefined): Arg {
  if (a?.kind === AK.GAS) return { kind: 'gas' };
  if (a?.kind === AK.INPUT && a.input !== undefined) return { kind: 'input', index: a.input };
  if (a?.kind === AK.RESULT && a.result !== undefined) {
    return a.subresult === undefined
      ? { kind: 'result', index: a.result }
      : { kind: 'result', index: a.result, sub: a.subresult };
  }
  throw new Rejected('malformed argument');
}

/** The SDK's partially built transaction (gRPC message) -> Plan with unresolved parts left open. */
export function planFromProto(tx: GrpcTypes.Transaction): Plan {
  const kind = tx.kind?.data;
  if (kind?.oneofKind !== 'programmableTransaction')
    throw new Rejected('only programmable transactions are supported');
  const ptb = kind.programmableTransaction;
  const inputs = ptb.inputs.map((i): Input => {
    if (i.kind === IK.PURE) return { kind: 'pure', bytes: i.pure ?? new Uint8Array() };
    if ((i.kind === undefined || i.kind === IK.IMMUTABLE_OR_OWNED) && i.objectId && !i.pure) {
      const objectId = normalizeSuiAddress(i.objectId);
      const ref =
        i.version !== undefined && i.digest !== undefined
          ? { objectId, version: i.version, digest: i.digest }
          : undefined;
      return ref ? { kind: 'object', objectId, ref } : { kind: 'object', objectId };
    }
    throw new Rejected('the sandbox supports only pure and owned-object inputs');
  });
  const commands = ptb.commands.map((c): Command => {
    const cmd = c.command;
    if (cmd.oneofKind === 'splitCoins') {
      return {
        kind: 'split',
        coin: fromProtoArg(cmd.splitCoins.coin),
        amounts: cmd.splitCoins.amounts.map(fromProtoArg),
      };
    }
    if (cmd.oneofKind === 'mergeCoins') {
      return {
        kind: 'merge',
        destination: fromProtoArg(cmd.mergeCoins.coin),
        sources: cmd.mergeCoins.coinsToMerge.map(fromProtoArg),
      };
    }
    if (cmd.oneofKind === 'transferObjects') {
      return {
        kind: 'transfer',
        objects: cmd.transferObjects.objects.map(fromProtoArg),
        address: fromProtoArg(cmd.transferObjects.address),
      };
    }
    throw new Rejected(`the sandbox does not support ${cmd.oneofKind ?? 'empty'} commands`);
  });
  let expiration: Expiration = { kind: 'none' };
  if (tx.expiration?.kind === EK.EPOCH && tx.expiration.epoch !== undefined) {
    expiration = { kind: 'epoch', epoch: tx.expiration.epoch };
  } else if (tx.expiration && tx.expiration.kind !== EK.NONE) {
    throw new Rejected('the sandbox supports only None and Epoch expiration');
  }
  if (!tx.sender) throw new Rejected('transaction has no sender');
  return {
    sender: normalizeSuiAddress(tx.sender),
    gas: {
      payment: (tx.gasPayment?.objects ?? []).map((o) => {
        if (!o.objectId || o.version === undefined || !o.digest)
          throw new Rejected('incomplete gas payment reference');
        return { objectId: normalizeSuiAddress(o.objectId), version: o.version, digest: o.digest };
      }),
      owner: tx.gasPayment?.owner ? normalizeSuiAddress(tx.gasPayment.owner) : null,
      price: tx.gasPayment?.price ?? null,
      budget: tx.gasPayment?.budget ?? null,
    },
    expiration,
    inputs,
    commands,
  };
}

function toProtoArg(a: Arg): GrpcTypes.Argument {
  if (a.kind === 'gas') return { kind: AK.GAS };
  if (a.kind === 'input') return { kind: AK.INPUT, input: a.index };
  return a.sub === undefined
    ? { kind: AK.RESULT, result: a.index }
    : { kind: AK.RESULT, result: a.index, subresult: a.sub };
}

function toProtoCommand(c: Command): GrpcTypes.Command {
  if (c.kind === 'split') {
    return {
      command: {
        oneofKind: 'splitCoins',
        splitCoins: { coin: toProtoArg(c.coin), amounts: c.amounts.map(toProtoArg) },
      },
    };
  }
  if (c.kind === 'merge') {
    return {
      command: {
        oneofKind: 'mergeCoins',
        mergeCoins: { coin: toProtoArg(c.destination), coinsToMerge: c.sources.map(toProtoArg) },
      },
    };
  }
  return {
    command: {
      oneofKind: 'transferObjects',
      transferObjects: { objects: c.objects.map(toProtoArg), address: toProtoArg(c.address) },
    },
  };
}

/** Plan -> gRPC `Transaction` (structured fields; the caller adds bcs and digest when it has them). */
export function planToProto(plan: Plan): GrpcTypes.Transaction {
  return {
    version: 1,
    sender: plan.sender,
    kind: {
      kind: GrpcTypes.TransactionKind_Kind.PROGRAMMABLE_TRANSACTION,
      data: {
        oneofKind: 'programmableTransaction',
        programmableTransaction: {
          inputs: plan.inputs.map((i): GrpcTypes.Input => {
            if (i.kind === 'pure') return { kind: IK.PURE, pure: i.bytes };
            const ref = i.ref;
            return ref
              ? {
                  kind: IK.IMMUTABLE_OR_OWNED,
                  objectId: ref.objectId,
                  version: ref.version,
                  digest: ref.digest,
                }
              : { objectId: i.objectId };
          }),
          commands: plan.commands.map(toProtoCommand),
        },
      },
    },
    gasPayment: {
      objects: plan.gas.payment.map((p) => ({ objectId: p.objectId, version: p.version, digest: p.digest })),
      ...(plan.gas.owner ? { owner: plan.gas.owner } : {}),
      ...(plan.gas.price !== null ? { price: plan.gas.price } : {}),
      ...(plan.gas.budget !== null ? { budget: plan.gas.budget } : {}),
    },
    expiration:
      plan.expiration.kind === 'epoch' ? { kind: EK.EPOCH, epoch: plan.expiration.epoch } : { kind: EK.NONE },
  };
}

/** Plan -> TransactionData BCS, so simulated transactions get the digest they will have. */
export function planToBcs(plan: Plan): Uint8Array {
  const arg = (a: Arg) =>
    a.kind === 'gas'
      ? { GasCoin: true }
      : a.kind === 'input'
        ? { Input: a.index }
        : a.sub === undefined
          ? { Result: a.index }
          : { NestedResult: [a.index, a.sub] as [number, number] };
  return bcs.TransactionData.serialize({
    V1: {
      kind: {
        ProgrammableTransaction: {
          inputs: plan.inputs.map((i) =>
            i.kind === 'pure' ? { Pure: { bytes: i.bytes } } : { Object: { ImmOrOwnedObject: i.ref! } },
          ),
          commands: plan.commands.map((c) =>
            c.kind === 'split'
              ? { SplitCoins: { coin: arg(c.coin), amounts: c.amounts.map(arg) } }
              : c.kind === 'merge'
                ? { MergeCoins: { destination: arg(c.destination), sources: c.sources.map(arg) } }
                : { TransferObjects: { objects: c.objects.map(arg), address: arg(c.address) } },
          ),
        },
      },
      sender: plan.sender,
      gasData: {
        payment: plan.gas.payment,
        owner: plan.gas.owner ?? plan.sender,
        price: plan.gas.price!,
        budget: plan.gas.budget!,
      },
      expiration:
        plan.expiration.kind === 'epoch' ? { Epoch: Number(plan.expiration.epoch) } : { None: true },
    },
  }).toBytes();
}
