import type { ChainVerifier } from '../chain.ts';
import { verifierFrom } from '../chain.ts';
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

/** The production Solana verifier: JSON-RPC fetch + normalise, then the shared `decide`. */
export function createSolanaVerifier(opts: SolanaSourceOptions): ChainVerifier {
  return verifierFrom(createSolanaSource(opts));
}
