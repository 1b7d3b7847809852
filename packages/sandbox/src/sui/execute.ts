/**
 * Runs a validated Plan against copies of its input coins and reports what would change.
 * It never touches the store: the ledger applies the outcome. Execution failures follow
 * Sui: every change is rolled back, gas is still charged and every input is rewritten.
 */
import { GrpcTypes } from '@mysten/sui/grpc';
import { normalizeSuiAddress, toHex } from '@mysten/sui/utils';
import { COMPUTATION_UNITS, STORAGE_COST_PER_OBJECT, STORAGE_REBATE_PER_OBJECT } from './constants.ts';
import type { Coin } from './objects.ts';
import { bigMax, bigMin, deriveObjectId, objectDigest } from './objects.ts';
import type { Arg, Plan } from './plan.ts';

const Kind = GrpcTypes.ExecutionError_ExecutionErrorKind;
type ErrorKind = GrpcTypes.ExecutionError_ExecutionErrorKind;

export interface GasSummary {
  computationCost: bigint;
  storageCost: bigint;
  storageRebate: bigint;
  nonRefundableStorageFee: bigint;
}

export interface ObjectChange {
  id: string;
  input: Coin | null;
  output: Coin | null;
}

export interface ExecutionOutcome {
  status:
    | { success: true }
    | { success: false; kind: ErrorKind; command: number | null; description: string };
  lamportVersion: bigint;
  gasUsed: GasSummary;
  gasObjectId: string;
  changes: ObjectChange[];
  balanceChanges: { address: string; coinType: string; amount: bigint }[];
}

/** Coins the plan names, already checked for existence, ownership and version by the caller. */
export interface ExecutionInputs {
  gasCoins: Coin[];
  /** By object id. */
  objects: Map<string, Coin>;
}

class Failure extends Error {
  readonly kind: ErrorKind;
  readonly command: number | null;
  constructor(kind: ErrorKind, command: number | null, description: string) {
    super(description);
    this.kind = kind;
    this.command = command;
  }
}

interface Value {
  coin: Omit<Coin, 'version' | 'digest' | 'previousTransaction'>;
  origin: 'gas' | 'input' | 'new';
  moved: boolean;
  deleted: boolean;
  createdBy?: number;
}

function u64(bytes: Uint8Array, command: number): bigint {
  if (bytes.length !== 8) {
    throw new Failure(Kind.COMMAND_ARGUMENT_ERROR, command, 'InvalidBCSBytes: expected a u64 amount');
  }
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
}

function address(bytes: Uint8Array, command: number): string {
  if (bytes.length !== 32) {
    throw new Failure(Kind.COMMAND_ARGUMENT_ERROR, command, 'InvalidBCSBytes: expected an address');
  }
  return normalizeSuiAddress(toHex(bytes));
}

/** Runs the commands; returns the values so the caller can settle gas and outputs. */
function run(plan: Plan, digest: string, inputs: ExecutionInputs, budget: bigint) {
  const gasCoins = inputs.gasCoins;
  const gasTotal = gasCoins.reduce((s, c) => s + c.balance, 0n);
  // Sui smashes every gas coin into the first and keeps the budget out of the PTB's reach.
  const gas: Value = {
    coin: { ...gasCoins[0]!, balance: gasTotal - budget },
    origin: 'gas',
    moved: false,
    deleted: false,
  };
  const byInput = new Map<number, Value>();
  plan.inputs.forEach((input, i) => {
    if (input.kind === 'object') {
      byInput.set(i, {
        coin: { ...inputs.objects.get(input.objectId)! },
        origin: 'input',
        moved: false,
        deleted: false,
      });
    }
  });
  const results: Value[][] = [];
  const created: Value[] = [];

  const coinArg = (arg: Arg, command: number): Value => {
    let v: Value | undefined;
    if (arg.kind === 'gas') v = gas;
    else if (arg.kind === 'input') {
      if (arg.index >= plan.inputs.length) {
        throw new Failure(Kind.COMMAND_ARGUMENT_ERROR, command, `IndexOutOfBounds: input ${arg.index}`);
      }
      v = byInput.get(arg.index);
      if (!v)
        throw new Failure(
          Kind.COMMAND_ARGUMENT_ERROR,
          command,
          `TypeMismatch: input ${arg.index} is not a coin`,
        );
    } else {
      const r = arg.index < command ? results[arg.index] : undefined;
      if (!r)
        throw new Failure(Kind.COMMAND_ARGUMENT_ERROR, command, `IndexOutOfBounds: result ${arg.index}`);
      if (arg.sub === undefined && r.length !== 1) {
        throw new Failure(Kind.COMMAND_ARGUMENT_ERROR, command, `InvalidResultArity: result ${arg.index}`);
      }
      v = r[arg.sub ?? 0];
      if (!v)
        throw new Failure(Kind.COMMAND_ARGUMENT_ERROR, command, `IndexOutOfBounds: result ${arg.index}`);
    }
    if (v.moved)
      throw new Failure(Kind.COMMAND_ARGUMENT_ERROR, command, 'InvalidValueUsage: value already moved');
    return v;
  };
  const pureArg = (arg: Arg, command: number): Uint8Array => {
    const input = arg.kind === 'input' ? plan.inputs[arg.index] : undefined;
    if (input?.kind !== 'pure') {
      throw new Failure(Kind.COMMAND_ARGUMENT_ERROR, command, 'TypeMismatch: expected a pure input');
    }
    return input.bytes;
  };

  plan.commands.forEach((cmd, i) => {
    if (cmd.kind === 'split') {
      const coin = coinArg(cmd.coin, i);
      const amounts = cmd.amounts.map((a) => u64(pureArg(a, i), i));
      const total = amounts.reduce((s, a) => s + a, 0n);
      if (total > coin.coin.balance) {
        throw new Failure(Kind.INSUFFICIENT_COIN_BALANCE, i, `InsufficientCoinBalance in command ${i}`);
      }
      coin.coin.balance -= total;
      results[i] = amounts.map((amount) => {
        const id = deriveObjectId(digest, created.length);
        const v: Value = {
          coin: { id, coinType: coin.coin.coinType, owner: plan.sender, balance: amount },
          origin: 'new',
          moved: false,
          deleted: false,
          createdBy: i,
        };
        created.push(v);
        return v;
      });
    } else if (cmd.kind === 'merge') {
      const dest = coinArg(cmd.destination, i);
      for (const s of cmd.sources) {
        const src = coinArg(s, i);
        if (src === gas)
          throw new Failure(Kind.COMMAND_ARGUMENT_ERROR, i, 'InvalidGasCoinUsage: gas coin merged');
        if (src === dest)
          throw new Failure(Kind.COMMAND_ARGUMENT_ERROR, i, 'InvalidValueUsage: coin merged into itself');
        if (src.coin.coinType !== dest.coin.coinType) {
          throw new Failure(Kind.COMMAND_ARGUMENT_ERROR, i, 'TypeMismatch: coins of different types');
        }
        dest.coin.balance += src.coin.balance;
        src.coin.balance = 0n;
        src.moved = true;
        src.deleted = true;
      }
      results[i] = [];
    } else {
      const to = address(pureArg(cmd.address, i), i);
      const objs = cmd.objects.map((o) => coinArg(o, i));
      for (const v of objs) {
        v.coin.owner = to;
        if (v !== gas) v.moved = true;
      }
      results[i] = [];
    }
  });
  const dropped = created.find((v) => !v.moved);
  if (dropped) {
    throw new Failure(
      Kind.UNUSED_VALUE_WITHOUT_DROP,
      dropped.createdBy ?? null,
      'UnusedValueWithoutDrop: a new coin was neither transferred nor merged',
    );
  }
  return { gas, inputs: [...byInput.values()], created: created.filter((v) => !v.deleted) };
}

function gasFor(written: number, rewrittenOrDeleted: number, price: bigint): GasSummary {
  return {
    computationCost: price * COMPUTATION_UNITS,
    storageCost: STORAGE_COST_PER_OBJECT * BigInt(written),
    storageRebate: STORAGE_REBATE_PER_OBJECT * BigInt(rewrittenOrDeleted),
    nonRefundableStorageFee:
      (STORAGE_COST_PER_OBJECT - STORAGE_REBATE_PER_OBJECT) * BigInt(rewrittenOrDeleted),
  };
}

const net = (g: GasSummary) => g.computationCost + g.storageCost - g.storageRebate;

export function executePlan(plan: Plan, digest: string, inputs: ExecutionInputs): ExecutionOutcome {
  const price = plan.gas.price!;
  const budget = plan.gas.budget!;
  const originals = [...inputs.gasCoins, ...inputs.objects.values()];
  const lamportVersion = bigMax(0n, ...originals.map((c) => c.version)) + 1n;
  const gasObjectId = inputs.gasCoins[0]!.id;
  const finish = (id: string, coin: Omit<Coin, 'version' | 'digest' | 'previousTransaction'>): Coin => {
    const base = { ...coin, id, version: lamportVersion, previousTransaction: digest };
    return { ...base, digest: objectDigest(base) };
  };

  let status: ExecutionOutcome['status'] = { success: true };
  let changes: ObjectChange[] = [];
  let gasUsed: GasSummary;
  try {
    const r = run(plan, digest, inputs, budget);
    const kept = r.inputs.filter((v) => !v.deleted);
    gasUsed = gasFor(1 + kept.length + r.created.length, originals.length, price);
    if (gasUsed.computationCost + gasUsed.storageCost > budget) {
      throw new Failure(Kind.INSUFFICIENT_GAS, null, 'InsufficientGas');
    }
    const gasOut = finish(gasObjectId, {
      ...r.gas.coin,
      balance: r.gas.coin.balance + budget - net(gasUsed),
    });
    changes = [
      { id: gasObjectId, input: inputs.gasCoins[0]!, output: gasOut },
      ...inputs.gasCoins.slice(1).map((c) => ({ id: c.id, input: c, output: null })),
      ...r.inputs.map((v) => ({
        id: v.coin.id,
        input: inputs.objects.get(v.coin.id)!,
        output: v.deleted ? null : finish(v.coin.id, v.coin),
      })),
      ...r.created.map((v) => ({ id: v.coin.id, input: null, output: finish(v.coin.id, v.coin) })),
    ];
  } catch (e) {
    if (!(e instanceof Failure)) throw e;
    status = { success: false, kind: e.kind, command: e.command, description: e.message };
    gasUsed = gasFor(1 + inputs.objects.size, originals.length, price);
    const total = inputs.gasCoins.reduce((s, c) => s + c.balance, 0n);
    const charge = bigMin(net(gasUsed), budget);
    const gas0 = inputs.gasCoins[0]!;
    changes = [
      { id: gasObjectId, input: gas0, output: finish(gasObjectId, { ...gas0, balance: total - charge }) },
      ...inputs.gasCoins.slice(1).map((c) => ({ id: c.id, input: c, output: null })),
      ...[...inputs.objects.values()].map((c) => ({ id: c.id, input: c, output: finish(c.id, c) })),
    ];
  }
  return { status, lamportVersion, gasUsed, gasObjectId, changes, balanceChanges: balanceChanges(changes) };
}

/** Per (address, coin type): outputs minus inputs, zeros dropped, like Sui's derive_balance_changes. */
function balanceChanges(changes: ObjectChange[]): ExecutionOutcome['balanceChanges'] {
  const sums = new Map<string, { address: string; coinType: string; amount: bigint }>();
  const add = (c: Coin, sign: bigint) => {
    const key = `${c.owner}|${c.coinType}`;
    const e = sums.get(key) ?? { address: c.owner, coinType: c.coinType, amount: 0n };
    e.amount += sign * c.balance;
    sums.set(key, e);
  };
  for (const ch of changes) {
    if (ch.input) add(ch.input, -1n);
    if (ch.output) add(ch.output, 1n);
  }
  return [...sums.values()].filter((e) => e.amount !== 0n);
}
