/**
 * Fixed parameters of the sandbox Sui chain. Gas numbers are shaped like mainnet's
 * (a coin transfer costs a few thousandths of a SUI) but are not mainnet's schedule.
 */
import { createHash } from 'node:crypto';
import { normalizeStructTag, toBase58 } from '@mysten/sui/utils';
import { USDC_SUI_COIN_TYPE } from '@tollgate/protocol';

export const SUI_COIN_TYPE = normalizeStructTag('0x2::sui::SUI');
export const USDC_COIN_TYPE = normalizeStructTag(USDC_SUI_COIN_TYPE);

/**
 * A look-alike of USDC: same module and name, 6 decimals, another package. Tests use it
 * to prove the verifier compares the full coin type and never the symbol.
 */
export const OTHER_COIN_TYPE = normalizeStructTag(
  `0x${createHash('sha256').update('tollgate-sandbox-lookalike-usdc').digest('hex')}::usdc::USDC`,
);

/** Base58 of 32 bytes, like a real chain id (the genesis checkpoint digest). */
export const SANDBOX_CHAIN_ID = toBase58(createHash('sha256').update('tollgate-sui-sandbox').digest());

export const EPOCH = 1n;
export const PROTOCOL_VERSION = 100n;
export const REFERENCE_GAS_PRICE = 1000n;
/** Computation units charged for any transaction (mainnet's smallest bucket). */
export const COMPUTATION_UNITS = 1000n;
/** Storage fee of writing one coin object, and the rebate when it is rewritten or deleted. */
export const STORAGE_COST_PER_OBJECT = 1_976_000n;
export const STORAGE_REBATE_PER_OBJECT = 1_956_240n;
export const MAX_GAS_BUDGET = 50_000_000_000n;
export const DEFAULT_FAUCET_MIST = 10_000_000_000n;
export const FIRST_CHECKPOINT = 1_000n;

export const COIN_METADATA: Record<string, { decimals: number; name: string; symbol: string }> = {
  [SUI_COIN_TYPE]: { decimals: 9, name: 'Sui', symbol: 'SUI' },
  [USDC_COIN_TYPE]: { decimals: 6, name: 'USDC', symbol: 'USDC' },
  [OTHER_COIN_TYPE]: { decimals: 6, name: 'Look-alike USDC (sandbox)', symbol: 'USDC' },
};

export function coinObjectType(coinType: string): string {
  return `0x0000000000000000000000000000000000000000000000000000000000000002::coin::Coin<${coinType}>`;
}
