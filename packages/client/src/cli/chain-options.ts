/**
 * What the payer commands share: `--chain`, the wallet's key file or address, and which
 * node to ask (`--rpc`, `$SOLANA_RPC_URL` / `$SUI_RPC_URL`, or a sandbox gateway's
 * `/sandbox/info`).
 */
import type { Chain } from '@tollgate/protocol';
import { USDC_SOLANA_MINT, USDC_SUI_COIN_TYPE } from '@tollgate/protocol';
import { solanaAddressOf } from '../wallets/keyfiles.ts';
import { loadSolanaKeyFile } from '../wallets/solana.ts';
import { loadSuiKeyFile } from '../wallets/sui.ts';
import { CliError, optionalString, type ParsedValues, requireString, UsageError } from './command.ts';
import { resolveGateway } from './credentials.ts';

export function chainOf(values: ParsedValues): Chain {
  const chain = requireString(values, 'chain');
  if (chain !== 'sui' && chain !== 'solana') throw new UsageError('--chain must be sui or solana');
  return chain;
}

/** A sandbox gateway's `/sandbox/info` (sandbox mode only). */
export interface SandboxInfo {
  solana: { rpcUrl: string; mint?: string };
  sui: { rpcUrl: string; coinType?: string };
}

/**
 * The gateway a payer command asks for sandbox info: --gateway, $TOLLGATE_GATEWAY, the
 * origin of the URL being paid (if any), then the last login.
 */
export function payerGateway(values: ParsedValues, env: Record<string, string | undefined>, url?: string) {
  const flag = optionalString(values, 'gateway');
  if (flag === undefined && !env['TOLLGATE_GATEWAY'] && url) {
    try {
      return resolveGateway({}, new URL(url).origin);
    } catch {
      // Not a URL: the request itself will say so.
    }
  }
  return resolveGateway(env, flag);
}

export async function sandboxInfo(gateway: string): Promise<SandboxInfo | null> {
  try {
    const res = await fetch(`${gateway}/sandbox/info`, {
      redirect: 'error',
      signal: AbortSignal.timeout(10_000),
    });
    return res.ok ? ((await res.json()) as SandboxInfo) : null;
  } catch {
    return null;
  }
}

export interface ChainNode {
  rpcUrl: string;
  /** The USDC mint (Solana) or coin type (Sui) on that node. */
  usdc: string;
}

/** The node to use for `chain`: --rpc, the environment, else the sandbox gateway's. */
export async function nodeFor(
  chain: Chain,
  values: ParsedValues,
  env: Record<string, string | undefined>,
  url?: string,
): Promise<ChainNode> {
  const given = optionalString(values, 'rpc') ?? env[chain === 'sui' ? 'SUI_RPC_URL' : 'SOLANA_RPC_URL'];
  if (given) return { rpcUrl: given, usdc: chain === 'sui' ? USDC_SUI_COIN_TYPE : USDC_SOLANA_MINT };
  const gateway = payerGateway(values, env, url);
  const info = await sandboxInfo(gateway);
  if (!info?.[chain]?.rpcUrl) {
    throw new CliError(
      `no --rpc given (or $${chain === 'sui' ? 'SUI' : 'SOLANA'}_RPC_URL), and no sandbox gateway at ${gateway} to ask for one`,
    );
  }
  return chain === 'sui'
    ? { rpcUrl: info.sui.rpcUrl, usdc: info.sui.coinType ?? USDC_SUI_COIN_TYPE }
    : { rpcUrl: info.solana.rpcUrl, usdc: info.solana.mint ?? USDC_SOLANA_MINT };
}

/** Reads a key file the way the payer commands do, as a clean error when it is not one. */
export function readKeyFile<T>(path: string, read: (path: string) => T): T {
  try {
    return read(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CliError(`cannot use key file ${path}: ${code ?? (e as Error).message}`);
  }
}

/** The wallet's address: `--address`, or the key file's (`--key`, with `--address` to pick from a Sui keystore). */
export function addressFrom(chain: Chain, values: ParsedValues): string {
  const key = optionalString(values, 'key');
  const address = optionalString(values, 'address');
  if (key === undefined) {
    if (address === undefined) throw new UsageError('--key <file> or --address <address> is required');
    return address;
  }
  if (chain === 'solana') {
    const own = solanaAddressOf(readKeyFile(key, loadSolanaKeyFile));
    if (address !== undefined && address !== own)
      throw new CliError(`the key file holds ${own}, not ${address}`);
    return own;
  }
  return readKeyFile(key, (p) => loadSuiKeyFile(p, address === undefined ? {} : { address })).toSuiAddress();
}
