/**
 * Wallet address validation per chain. One canonical spelling per address, so
 * the same wallet can never own two identities (Sui hex is case-insensitive).
 */
import { getBase58Encoder } from '@solana/kit';
import type { Chain } from '../store/store.ts';

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const SUI_HEX = /^0x[0-9a-fA-F]{64}$/;

/** The canonical form of a wallet address, or null when it is not one. */
export function normalizeAddress(chain: Chain, raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  if (chain === 'sui') return SUI_HEX.test(raw) ? raw.toLowerCase() : null;
  if (!BASE58.test(raw)) return null;
  try {
    return getBase58Encoder().encode(raw).length === 32 ? raw : null;
  } catch {
    return null;
  }
}

export function isChain(value: unknown): value is Chain {
  return value === 'sui' || value === 'solana';
}
