/**
 * The Sui chain verifier: the production SuiGrpcClient source plus the shared `decide`.
 */
import type { ChainVerifier } from '../chain.ts';
import { verifierFrom } from '../chain.ts';
import type { SuiSourceOptions } from './source.ts';
import { createSuiSource } from './source.ts';

export type { SuiBalanceChange, SuiTransactionBody, SuiTransactionResult } from './normalise.ts';
export { decodeBcsString, normaliseSuiTransaction } from './normalise.ts';
export type { SuiReadClient, SuiSourceOptions } from './source.ts';
export { createSuiSource, SUI_MAINNET_CHAIN_ID } from './source.ts';

/** @example createSuiVerifier({ rpcUrl: 'https://fullnode.mainnet.sui.io:443', network: 'mainnet' }) */
export function createSuiVerifier(opts: SuiSourceOptions): ChainVerifier {
  return verifierFrom(createSuiSource(opts));
}
