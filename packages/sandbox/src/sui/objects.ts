/**
 * The sandbox ledger's object model: only `Coin<T>` objects exist, each owned by an
 * address. Ids and digests are derived by hashing so they look and parse like real ones.
 */
import { createHash } from 'node:crypto';
import { normalizeSuiAddress, toBase58 } from '@mysten/sui/utils';

export interface Coin {
  id: string;
  /** Normalised coin type T of Coin<T>. */
  coinType: string;
  owner: string;
  balance: bigint;
  version: bigint;
  digest: string;
  previousTransaction: string;
}

export interface ObjectRef {
  objectId: string;
  version: bigint;
  digest: string;
}

function sha256(...parts: (string | bigint)[]): Buffer {
  const h = createHash('sha256');
  for (const p of parts) h.update(`${p}\u0000`);
  return h.digest();
}

/** Object id of the `index`-th object created by a transaction, like Sui's derivation. */
export function deriveObjectId(txDigest: string, index: number): string {
  return normalizeSuiAddress(sha256('object-id', txDigest, BigInt(index)).toString('hex'));
}

export function objectDigest(coin: Omit<Coin, 'digest'>): string {
  return toBase58(
    sha256(
      'object',
      coin.id,
      coin.version,
      coin.coinType,
      coin.owner,
      coin.balance,
      coin.previousTransaction,
    ),
  );
}

/** A stand-in digest for objects that appear without a transaction (faucet, genesis). */
export function syntheticDigest(...parts: (string | bigint)[]): string {
  return toBase58(sha256('synthetic', ...parts));
}

export function refOf(coin: Coin): ObjectRef {
  return { objectId: coin.id, version: coin.version, digest: coin.digest };
}

/** The live object set. Deleted objects simply disappear. */
export class ObjectStore {
  readonly #coins = new Map<string, Coin>();

  get(id: string): Coin | undefined {
    return this.#coins.get(normalizeSuiAddress(id));
  }

  put(coin: Coin): void {
    this.#coins.set(coin.id, coin);
  }

  delete(id: string): void {
    this.#coins.delete(id);
  }

  ownedBy(owner: string, coinType?: string): Coin[] {
    const out: Coin[] = [];
    for (const c of this.#coins.values()) {
      if (c.owner === owner && (coinType === undefined || c.coinType === coinType)) out.push(c);
    }
    return out;
  }
}

/** Math.min/Math.max for bigint. */
export function bigMin(first: bigint, ...rest: bigint[]): bigint {
  let m = first;
  for (const x of rest) if (x < m) m = x;
  return m;
}
export function bigMax(first: bigint, ...rest: bigint[]): bigint {
  let m = first;
  for (const x of rest) if (x > m) m = x;
  return m;
}
