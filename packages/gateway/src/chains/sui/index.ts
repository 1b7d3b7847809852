/**
 * The Sui chain verifier: the production SuiGrpcClient source, guarded, plus the shared `decide`.
 */
import type { ChainVerifier } from '../chain.ts';
import type { LookupGuardOptions } from '../guard.ts';
import { guardedVerifier } from '../guard.ts';
import type { SuiSourceOptions } from './source.ts';
import { createSuiSource } from './source.ts';

export type { SuiBalanceChange, SuiTransactionBody, SuiTransactionResult } from './normalise.ts';
export { decodeBcsString, normaliseSuiTransaction } from './normalise.ts';
export type { SuiReadClient, SuiSourceOptions } from './source.ts';
export { createSuiSource, SUI_MAINNET_CHAIN_ID } from './source.ts';

export type SuiVerifierOptions = SuiSourceOptions & LookupGuardOptions;

/**
 * The production Sui verifier: gRPC fetch + normalise behind the lookup guard (negative
 * cache, one lookup per id, a cap on lookups in flight), then the shared `decide`.
 * @example createSuiVerifier({ rpcUrl: 'https://fullnode.mainnet.sui.io:443', network: 'mainnet' })
 */
export function createSuiVerifier(opts: SuiVerifierOptions): ChainVerifier {
  return guardedVerifier(createSuiSource(opts), opts);
}
