/**
 * The sandbox Sui ledger: an object store of coins, signature-checked execution of the
 * PTB subset in plan.ts, transaction records and checkpoints. Validation and execution
 * run synchronously after the (async) signature check, so two submissions racing for
 * the same coin version cannot both pass: the second sees the bumped version.
 */
import { TransactionDataBuilder } from '@mysten/sui/transactions';
import { normalizeStructTag, normalizeSuiAddress, toBase64 } from '@mysten/sui/utils';
import { verifyTransactionSignature } from '@mysten/sui/verify';
import {
  COMPUTATION_UNITS,
  EPOCH,
  FIRST_CHECKPOINT,
  MAX_GAS_BUDGET,
  REFERENCE_GAS_PRICE,
  SANDBOX_CHAIN_ID,
  SUI_COIN_TYPE,
} from './constants.ts';
import type { ExecutionOutcome } from './execute.ts';
import { executePlan } from './execute.ts';
import type { Coin } from './objects.ts';
import { bigMin, deriveObjectId, ObjectStore, objectDigest, refOf, syntheticDigest } from './objects.ts';
import type { Plan } from './plan.ts';
import { planFromBcs, planToBcs, Rejected } from './plan.ts';

export interface TxRecord {
  digest: string;
  bytes: Uint8Array;
  signatures: Uint8Array[];
  plan: Plan;
  outcome: ExecutionOutcome;
  checkpoint: bigint | null;
  timestampMs: number | null;
}

export interface Simulation {
  plan: Plan;
  bytes: Uint8Array;
  digest: string;
  outcome: ExecutionOutcome;
}

export class SuiLedger {
  readonly objects = new ObjectStore();
  readonly chainId: string;
  readonly epoch = EPOCH;
  readonly referenceGasPrice = REFERENCE_GAS_PRICE;
  readonly epochStartMs = Date.now();
  /** While true, new transactions get no checkpoint (not final) until finalizeAll(). */
  holdFinality = false;
  readonly #txs = new Map<string, TxRecord>();
  #checkpoint = FIRST_CHECKPOINT;
  #checkpointMs = Date.now();
  #mints = 0;

  constructor(chainId = SANDBOX_CHAIN_ID) {
    this.chainId = chainId;
  }

  get checkpointHeight(): bigint {
    return this.#checkpoint;
  }
  get checkpointTimestampMs(): number {
    return this.#checkpointMs;
  }

  /** Creates a coin out of thin air (faucet). */
  mint(owner: string, coinType: string, balance: bigint): Coin {
    const n = BigInt(++this.#mints);
    const previousTransaction = syntheticDigest('faucet', n);
    const base = {
      id: deriveObjectId(previousTransaction, 0),
      coinType: normalizeStructTag(coinType),
      owner: normalizeSuiAddress(owner),
      balance,
      version: 1n,
      previousTransaction,
    };
    const coin = { ...base, digest: objectDigest(base) };
    this.objects.put(coin);
    return coin;
  }

  getTransaction(digest: string): TxRecord | undefined {
    return this.#txs.get(digest);
  }

  /** Gives every transaction still waiting a checkpoint (one new checkpoint for all). */
  finalizeAll(): void {
    const waiting = [...this.#txs.values()].filter((t) => t.checkpoint === null);
    if (waiting.length > 0) this.#checkpointTxs(waiting);
  }

  /**
   * Resolves what the SDK left open (object versions, gas) and dry-runs the result. Like a
   * full node, a transaction with no gas payment and gas selection off runs on a mock coin.
   */
  simulate(plan: Plan, opts: { doGasSelection: boolean; checks: boolean }): Simulation {
    const resolved: Plan = {
      ...plan,
      inputs: plan.inputs.map((i) => {
        if (i.kind === 'pure' || i.ref) return i;
        const coin = this.objects.get(i.objectId);
        if (!coin) throw new Rejected(`Object ${i.objectId} not found`);
        return { ...i, ref: refOf(coin) };
      }),
      gas: { ...plan.gas, payment: [...plan.gas.payment] },
    };
    const gas = resolved.gas;
    gas.owner ??= resolved.sender;
    gas.price ??= this.referenceGasPrice;
    const mock =
      gas.payment.length === 0 && !opts.doGasSelection ? [this.#mockGasCoin(gas.owner)] : undefined;
    const used = new Set(resolved.inputs.flatMap((i) => (i.kind === 'object' ? [i.objectId] : [])));
    const candidates =
      mock ??
      (gas.payment.length > 0
        ? gas.payment.map((p) => this.objects.get(p.objectId)).filter((c): c is Coin => c !== undefined)
        : this.objects
            .ownedBy(gas.owner, SUI_COIN_TYPE)
            .filter((c) => !used.has(c.id))
            .sort((x, y) => (x.balance < y.balance ? 1 : x.balance > y.balance ? -1 : 0)));
    if (candidates.length === 0) throw new Rejected(`no SUI coins owned by ${gas.owner} to pay gas`);
    if (gas.budget === null) {
      // Estimated on the largest coin; more gas coins only add rebates, so the estimate holds.
      const probeBudget = bigMin(candidates[0]!.balance, MAX_GAS_BUDGET);
      const probe = this.#dryRun({ ...resolved, gas: { ...gas, budget: probeBudget } }, 'simulation', [
        candidates[0]!,
      ]);
      const g = probe.gasUsed;
      gas.budget = g.computationCost + g.storageCost + gas.price * COMPUTATION_UNITS;
    }
    if (gas.payment.length === 0 && !mock) {
      let sum = 0n;
      for (const c of candidates) {
        if (sum >= gas.budget) break;
        gas.payment.push(refOf(c));
        sum += c.balance;
      }
    }
    if (opts.checks) this.#validate(resolved, { gas: !mock });
    const bytes = planToBcs(resolved);
    const digest = TransactionDataBuilder.getDigestFromBytes(bytes);
    return { plan: resolved, bytes, digest, outcome: this.#dryRun(resolved, digest, mock) };
  }

  /** Verifies signatures, validates inputs, executes and commits. Re-submission returns the first result. */
  async execute(bytes: Uint8Array, signatures: Uint8Array[]): Promise<TxRecord> {
    const plan = planFromBcs(bytes);
    const digest = TransactionDataBuilder.getDigestFromBytes(bytes);
    const known = this.#txs.get(digest);
    if (known) return known;
    await verifySigners(bytes, signatures, plan);

    // Synchronous from here on: validation and commit cannot interleave with another submission.
    const raced = this.#txs.get(digest);
    if (raced) return raced;
    const inputs = this.#validate(plan);
    const outcome = executePlan(plan, digest, inputs);
    for (const ch of outcome.changes) {
      if (ch.output) this.objects.put(ch.output);
      else this.objects.delete(ch.id);
    }
    const record: TxRecord = {
      digest,
      bytes,
      signatures,
      plan,
      outcome,
      checkpoint: null,
      timestampMs: null,
    };
    this.#txs.set(digest, record);
    if (!this.holdFinality) this.#checkpointTxs([record]);
    return record;
  }

  #checkpointTxs(records: TxRecord[]): void {
    this.#checkpoint += 1n;
    this.#checkpointMs = Math.max(Date.now(), this.#checkpointMs);
    for (const r of records) {
      r.checkpoint = this.#checkpoint;
      r.timestampMs = this.#checkpointMs;
    }
  }

  #mockGasCoin(owner: string): Coin {
    const base = {
      id: deriveObjectId(syntheticDigest('mock-gas'), 0),
      coinType: SUI_COIN_TYPE,
      owner,
      balance: MAX_GAS_BUDGET,
      version: 0n,
      previousTransaction: syntheticDigest('mock-gas'),
    };
    return { ...base, digest: objectDigest(base) };
  }

  #dryRun(plan: Plan, digest: string, gasCoins?: Coin[]): ExecutionOutcome {
    const gas = gasCoins ?? plan.gas.payment.map((p) => this.objects.get(p.objectId));
    if (gas.length === 0 || gas.some((c) => c === undefined)) throw new Rejected('gas coin not found');
    const objects = new Map<string, Coin>();
    for (const i of plan.inputs) {
      if (i.kind !== 'object') continue;
      const c = this.objects.get(i.objectId);
      if (!c) throw new Rejected(`Object ${i.objectId} not found`);
      objects.set(c.id, c);
    }
    const coins = gas as Coin[];
    const budget = bigMin(
      plan.gas.budget!,
      coins.reduce((sum, c) => sum + c.balance, 0n),
    );
    return executePlan({ ...plan, gas: { ...plan.gas, budget } }, digest, { gasCoins: coins, objects });
  }

  /** The checks a validator makes before execution. Throws Rejected with Sui-like messages. */
  #validate(plan: Plan, check = { gas: true }): { gasCoins: Coin[]; objects: Map<string, Coin> } {
    const { price, budget, payment } = plan.gas;
    const gasOwner = plan.gas.owner ?? plan.sender;
    if (plan.expiration.kind === 'epoch' && plan.expiration.epoch < this.epoch) {
      throw new Rejected('Transaction Expired');
    }
    if (price === null || price < this.referenceGasPrice) {
      throw new Rejected(`Gas price ${price} under reference gas price (RGP) ${this.referenceGasPrice}`);
    }
    if (budget === null || budget < price * COMPUTATION_UNITS || budget > MAX_GAS_BUDGET) {
      throw new Rejected(`Gas budget ${budget} is out of range`);
    }
    if (payment.length === 0 && check.gas) throw new Rejected('Missing gas payment');
    const seen = new Set<string>();
    const live = (ref: { objectId: string; version: bigint; digest: string }): Coin => {
      if (seen.has(ref.objectId))
        throw new Rejected(`Mutable object ${ref.objectId} cannot appear more than once`);
      seen.add(ref.objectId);
      const coin = this.objects.get(ref.objectId);
      if (!coin)
        throw new Rejected(`Could not find the referenced object ${ref.objectId} at version ${ref.version}`);
      if (coin.version !== ref.version || coin.digest !== ref.digest) {
        throw new Rejected(
          `Transaction needs to be rejected because object ${ref.objectId} version ${ref.version} is unavailable for consumption, current version: ${coin.version}`,
        );
      }
      return coin;
    };
    const gasCoins = payment.map((ref) => {
      const coin = live(ref);
      if (coin.coinType !== SUI_COIN_TYPE) throw new Rejected(`Gas object ${coin.id} is not a SUI coin`);
      if (coin.owner !== gasOwner) throw new Rejected(`Gas object ${coin.id} is not owned by ${gasOwner}`);
      return coin;
    });
    const gasTotal = gasCoins.reduce((s, c) => s + c.balance, 0n);
    if (check.gas && gasTotal < budget) {
      throw new Rejected(
        `Balance of gas object ${gasCoins[0]!.id} is lower than the needed amount: ${budget}`,
      );
    }
    const objects = new Map<string, Coin>();
    for (const input of plan.inputs) {
      if (input.kind !== 'object') continue;
      if (!input.ref) throw new Rejected(`Object ${input.objectId} is not resolved`);
      const coin = live(input.ref);
      if (coin.owner !== plan.sender)
        throw new Rejected(`Object ${coin.id} is owned by ${coin.owner}, not the sender`);
      objects.set(coin.id, coin);
    }
    return { gasCoins, objects };
  }
}

/** Sender and (if sponsored) gas owner must each have a valid signature over the bytes. */
async function verifySigners(bytes: Uint8Array, signatures: Uint8Array[], plan: Plan): Promise<void> {
  const required = new Set([plan.sender, plan.gas.owner ?? plan.sender]);
  for (const signer of required) {
    let ok = false;
    for (const sig of signatures) {
      try {
        await verifyTransactionSignature(bytes, toBase64(sig), { address: signer });
        ok = true;
        break;
      } catch {
        // try the next signature
      }
    }
    if (!ok) throw new Rejected(`Signature is not valid for the provided transaction and signer ${signer}`);
  }
}
