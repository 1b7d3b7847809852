/**
 * Sandbox mode's platform wallets for the operator-command tests: written into the data
 * directory where `npm start` would have created them (the payout and refund commands
 * load them from there) and funded on the sandbox chains.
 */
import { join } from 'node:path';
import { newSolanaKey, newSuiKey, saveSolanaKeyFile, saveSuiKeyFile } from '@tollgate/client';
import type { Chains } from './gateway-harness.ts';

/** Writes fresh platform keys into `dir`, funds each with `fund` (atomic USDC, and native coin), returns the addresses. */
export async function sandboxPlatformWallets(
  dir: string,
  chains: Chains,
  fund: bigint,
): Promise<{ solana: string; sui: string }> {
  const solana = newSolanaKey();
  const sui = newSuiKey();
  saveSolanaKeyFile(join(dir, 'sandbox', 'platform-solana.json'), solana);
  saveSuiKeyFile(join(dir, 'sandbox', 'platform-sui.key'), sui);
  await chains.solana.faucet(solana.address, fund);
  chains.sui.faucet(sui.address, fund);
  return { solana: solana.address, sui: sui.address };
}
