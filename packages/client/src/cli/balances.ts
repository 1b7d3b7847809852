/**
 * A wallet's balances, read from its chain's node: USDC (every token account / coin of
 * the USDC mint or coin type) and the native coin that pays fees (SOL, SUI).
 */
import { SuiGrpcClient } from '@mysten/sui/grpc';
import { isValidSuiAddress, normalizeSuiAddress } from '@mysten/sui/utils';
import { address, createSolanaRpc, isAddress } from '@solana/kit';
import { type Chain, formatAmount, USDC_DECIMALS } from '@tollgate/protocol';
import { CliError } from './command.ts';

export type Balances =
  | { chain: 'solana'; address: string; usdc: string; sol: string }
  | { chain: 'sui'; address: string; usdc: string; sui: string };

const SUI_COIN_TYPE = '0x2::sui::SUI';

/** The amount of an SPL token account (bytes 64..72, little-endian u64), from its base64 data. */
function tokenAmount(base64: string): bigint {
  const data = Buffer.from(base64, 'base64');
  return data.length >= 72 ? data.readBigUInt64LE(64) : 0n;
}

async function solanaBalances(rpcUrl: string, owner: string, mint: string) {
  if (!isAddress(owner)) throw new CliError(`${owner} is not a Solana address`);
  const rpc = createSolanaRpc(rpcUrl);
  const [lamports, accounts] = await Promise.all([
    rpc.getBalance(address(owner)).send(),
    rpc.getTokenAccountsByOwner(address(owner), { mint: address(mint) }, { encoding: 'base64' }).send(),
  ]);
  const usdc = accounts.value.reduce((sum, a) => sum + tokenAmount(a.account.data[0]), 0n);
  return { usdc, native: lamports.value };
}

async function suiBalances(rpcUrl: string, owner: string, coinType: string) {
  const normalized = normalizeSuiAddress(owner);
  if (!isValidSuiAddress(normalized)) throw new CliError(`${owner} is not a Sui address`);
  // The network name only labels the client; the node is whatever rpcUrl is.
  const client = new SuiGrpcClient({ network: 'unknown', baseUrl: rpcUrl });
  const [usdc, sui] = await Promise.all([
    client.core.getBalance({ owner: normalized, coinType }),
    client.core.getBalance({ owner: normalized, coinType: SUI_COIN_TYPE }),
  ]);
  return { usdc: BigInt(usdc.balance.balance), native: BigInt(sui.balance.balance) };
}

/** USDC and SOL/SUI of `owner` on the node at `rpcUrl`, as decimal strings. */
export async function readBalances(
  chain: Chain,
  rpcUrl: string,
  owner: string,
  usdcAsset: string,
): Promise<Balances> {
  let read: { usdc: bigint; native: bigint };
  try {
    read =
      chain === 'solana'
        ? await solanaBalances(rpcUrl, owner, usdcAsset)
        : await suiBalances(rpcUrl, owner, usdcAsset);
  } catch (e) {
    if (e instanceof CliError) throw e;
    const cause = (e as Error).cause as Error | undefined;
    throw new CliError(
      `cannot read balances from ${rpcUrl}: ${(e as Error).message}${cause?.message ? `: ${cause.message}` : ''}`,
    );
  }
  const usdc = formatAmount(read.usdc, USDC_DECIMALS);
  return chain === 'solana'
    ? { chain, address: owner, usdc, sol: formatAmount(read.native, 9) }
    : { chain, address: owner, usdc, sui: formatAmount(read.native, 9) };
}
