/**
 * The platform wallets a refund run pays from: opened only for chains with work, once
 * each, and checked against the gateway's network (a mainnet gateway never pays from a
 * test chain's node, nor the reverse), as the payout command checks.
 */
import { formatAmount, USDC_DECIMALS } from '@tollgate/protocol';
import type { Chain } from '../store/store.ts';
import type { PayoutChain } from './payout-chain.ts';
import { networkMismatch } from './transfer-outcome.ts';

const usdc = (a: bigint) => formatAmount(a, USDC_DECIMALS);

export function platformWallets(
  open: (chain: Chain) => Promise<PayoutChain>,
  network: string,
): (chain: Chain) => Promise<PayoutChain> {
  const wallets = new Map<Chain, Promise<PayoutChain>>();
  return (chain) => {
    let w = wallets.get(chain);
    if (!w) {
      w = (async () => {
        const wallet = await open(chain);
        const mismatch = networkMismatch(chain, await wallet.identity(), network);
        if (mismatch) throw new Error(mismatch);
        return wallet;
      })();
      wallets.set(chain, w);
    }
    return w;
  };
}

/** Why the platform wallet cannot pay `need` now, or null. */
export async function fundsProblem(wallet: PayoutChain, need: bigint): Promise<string | null> {
  try {
    const have = await wallet.usdcBalance();
    if (have < need)
      return `the platform wallet ${wallet.address} holds ${usdc(have)} USDC, the refund needs ${usdc(need)} USDC`;
    if ((await wallet.gasBalance()) === 0n)
      return `the platform wallet ${wallet.address} holds no ${wallet.chain === 'solana' ? 'SOL' : 'SUI'} to pay transaction fees`;
    return null;
  } catch (e) {
    return `could not read the platform wallet's balances: ${e instanceof Error ? e.message : String(e)}`;
  }
}
