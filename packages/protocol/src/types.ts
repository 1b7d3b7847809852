/**
 * Wire types of the payment protocol, named exactly as SPEC.md §2 names them.
 * Amounts are decimal strings of whole USDC; see amounts.ts.
 */

export type Chain = 'sui' | 'solana';
export const CHAINS: readonly Chain[] = ['sui', 'solana'];
export type Scheme = 'exact_split' | 'exact';

export interface Split {
  recipientType: 'provider' | 'platform';
  payTo: string;
  amount: string;
}

export interface AcceptOption {
  chain: Chain;
  /** `mainnet` in production, `localnet` on the sandbox chains. */
  network: string;
  asset: 'USDC';
  totalAmount: string;
  decimals: number;
  /** Sui options: the fully qualified coin type. */
  coinType?: string;
  /** Solana options: the token mint address. */
  mint?: string;
  splits: Split[];
  /** Must be put in the payment transaction (Solana SPL Memo; Sui Pure string input). */
  memo: string;
}

export interface AmountAsset {
  amount: string;
  asset: string;
}

export interface Cost {
  inference?: AmountAsset;
  total?: AmountAsset;
  pricingSourceVersion?: string;
  [extra: string]: unknown;
}

export interface PaymentRequirement {
  error: 'payment_required';
  x402Version: 1;
  scheme: Scheme;
  resource: string;
  description: string;
  expiresAt: string;
  nonce: string;
  requestHash: string;
  paymentRequirementId: string;
  accepts: AcceptOption[];
  cost?: Cost;
  /** Present when a proof was sent but rejected. */
  reason?: string;
  message?: string;
  requestId?: string;
}

export interface PaymentProof {
  x402Version: 1;
  scheme: Scheme;
  chain: Chain;
  network: string;
  asset: 'USDC';
  payer: string;
  txHashOrDigest: string;
  paymentRequirementId: string;
  nonce: string;
  requestHash: string;
  expiresAt: string;
}

/** Body of the `X-PAYMENT-RESPONSE` receipt header (base64 JSON). */
export interface PaymentReceipt {
  success: boolean;
  chain: Chain;
  network: string;
  txHashOrDigest: string;
  payer: string;
  paymentRequirementId: string;
}

/** Mainnet USDC asset ids; the sandbox chains use the same ones. */
export const USDC_SOLANA_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
export const USDC_SUI_COIN_TYPE =
  '0xdba34672e30cb065b1f93e3ab55318768fd6fef66c15942c9f7cb846e2f900e7::usdc::USDC';
export const SPL_MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';

/** Memo programs whose instructions count as a memo: SPL Memo, then Memo v1. */
export const SOLANA_MEMO_PROGRAMS: readonly string[] = [
  SPL_MEMO_PROGRAM,
  'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo',
];
/** The classic SPL Token program and Token-2022. */
export const SPL_TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const SPL_TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
export const SOLANA_TOKEN_PROGRAMS: readonly string[] = [SPL_TOKEN_PROGRAM, SPL_TOKEN_2022_PROGRAM];

/** What `getGenesisHash` answers on Solana mainnet-beta. */
export const SOLANA_MAINNET_GENESIS_HASH = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d';
/**
 * Solana devnet's genesis hash. Sandbox mode's local chain presents it, so stock x402
 * clients (which know only mainnet, devnet and testnet) can pay the sandbox: a stand-in,
 * like the USDC mint at its mainnet address.
 */
export const SOLANA_DEVNET_GENESIS_HASH = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';
/** Sui mainnet's chain identifier (as gRPC `GetServiceInfo` reports it). */
export const SUI_MAINNET_CHAIN_ID = '4btiuiMPvEENsttpZC7CZ53DruC3MAgfznDbASZ7DR6S';

/** The memo the payer must put on-chain for a requirement's nonce. */
export function memoForNonce(nonce: string): string {
  return `tollgate:v1:${nonce}`;
}
