import type { ChainVerifier } from '../chain.ts';
import type { LookupGuardOptions } from '../guard.ts';
import { guardedVerifier } from '../guard.ts';
import type { SolanaSourceOptions } from './source.ts';
import { createSolanaSource } from './source.ts';

export type { NormaliseOptions } from './normalise.ts';
export {
  normaliseSolanaTransaction,
  SOLANA_MEMO_PROGRAMS,
  SOLANA_TOKEN_PROGRAMS,
  SolanaShapeError,
  UNKNOWN_AUTHORITY,
} from './normalise.ts';
export type { SolanaSourceOptions } from './source.ts';
export { createSolanaSource, SOLANA_MAINNET_GENESIS_HASH } from './source.ts';

export type SolanaVerifierOptions = SolanaSourceOptions & LookupGuardOptions;

/**
 * The production Solana verifier: JSON-RPC fetch + normalise behind the lookup guard
 * (negative cache, one lookup per id, a cap on lookups in flight), then the shared `decide`.
 */
export function createSolanaVerifier(opts: SolanaVerifierOptions): ChainVerifier {
  return guardedVerifier(createSolanaSource(opts), opts);
}
