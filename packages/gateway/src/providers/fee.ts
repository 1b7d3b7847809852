/**
 * The platform fee policy (DESIGN §4.2): basis points of the price, rounded up
 * to a whole atomic unit, never below the configured minimum. BigInt only.
 */
import type { Config } from '../config.ts';

/** fee = max(ceil(price * feeBps / 10000), feeMin), all in atomic units. */
export function platformFee(priceAtomic: bigint, config: Pick<Config, 'feeBps' | 'feeMin'>): bigint {
  if (priceAtomic < 0n) throw new RangeError('price must not be negative');
  const proportional = (priceAtomic * BigInt(config.feeBps) + 9_999n) / 10_000n;
  return proportional > config.feeMin ? proportional : config.feeMin;
}
