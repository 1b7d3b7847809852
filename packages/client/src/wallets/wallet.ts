import type { AcceptOption } from '@tollgate/protocol';

/**
 * A payer's wallet on one chain. `pay` puts one transaction on-chain that pays every
 * split of the option (exact amounts, exact asset) and carries the option's memo,
 * waits until the chain has it, and returns its signature / digest. It refuses
 * (`network_mismatch`) an option on another network than its node's.
 */
export interface PaymentWallet {
  readonly chain: 'sui' | 'solana';
  readonly address: string;
  pay(option: AcceptOption, opts?: { signal?: AbortSignal }): Promise<string /* txHashOrDigest */>;
  /**
   * Which network the wallet's node is on: Solana's genesis hash (`getGenesisHash`), Sui's
   * chain id. Asked once, then cached. payFetch compares it with the option's network
   * before paying (see `assertNetwork`).
   */
  chainIdentity(opts?: { signal?: AbortSignal }): Promise<string>;
}

/**
 * Something that signs off-chain messages for an address: the payer wallets
 * (`solanaWallet`, `suiWallet`) are, and so is any object of this shape. `signIn` uses it
 * to sign the gateway's sign-in message.
 */
export interface MessageSigner {
  readonly chain: 'sui' | 'solana';
  readonly address: string;
  /**
   * Signs the exact UTF-8 bytes of `message`. Solana: the ed25519 signature, base58 (as
   * wallets' `signMessage`). Sui: the serialized personal-message signature, base64 (as
   * `signPersonalMessage`); it cannot be replayed as a transaction signature.
   */
  signMessage(message: string): Promise<string>;
}
