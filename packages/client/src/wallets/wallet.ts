import type { AcceptOption } from '@tollgate/protocol';

/**
 * A payer's wallet on one chain. `pay` puts one transaction on-chain that pays every
 * split of the option (exact amounts, exact asset) and carries the option's memo,
 * waits until the chain has it, and returns its signature / digest.
 */
export interface PaymentWallet {
  readonly chain: 'sui' | 'solana';
  readonly address: string;
  pay(option: AcceptOption, opts?: { signal?: AbortSignal }): Promise<string /* txHashOrDigest */>;
}
