/**
 * The one line the gateway logs once it listens: what it runs against, so an operator
 * can tell from the log alone. Nothing secret: URLs go through safeUrl (no credentials,
 * query values or path keys), the database shows no password.
 */
import type { AddressInfo } from 'node:net';
import { describeDatabase, safeUrl } from '../config-checks.ts';
import type { Deps } from '../deps.ts';

export interface StartupSummary {
  mode: 'sandbox' | 'production';
  /** What the server is bound to. */
  listen: string;
  publicBaseUrl: string;
  chains: { chain: 'solana' | 'sui'; network: string; rpc: string | null }[];
  database: { backend: 'sqlite' | 'postgres'; location: string };
  /** null when the count could not be read. */
  projects: number | null;
  platform: { solana: string | null; sui: string | null };
  /** The x402 v2 fee payer on Solana, when one is configured. */
  sponsor: string | null;
  /** Chains with an x402 v2 `exact` offer. */
  x402v2: string[];
}

/** `http://host:port` of a bound server address; `local` turns a wildcard into loopback. */
export function listenUrl(address: AddressInfo | string | null, opts: { local?: boolean } = {}): string {
  if (address === null) return '(not listening)';
  if (typeof address === 'string') return address; // a Unix socket path
  let host = address.address;
  if (opts.local && host === '0.0.0.0') host = '127.0.0.1';
  if (opts.local && host === '::') host = '::1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

export async function startupSummary(
  deps: Pick<Deps, 'config' | 'store' | 'sponsor' | 'v2Schemes'>,
  listen: string,
): Promise<StartupSummary> {
  const { config } = deps;
  const chains: StartupSummary['chains'] = [];
  if (config.solanaRpcUrl)
    chains.push({ chain: 'solana', network: config.chainNetwork, rpc: safeUrl(config.solanaRpcUrl) });
  if (config.suiRpcUrl)
    chains.push({ chain: 'sui', network: config.chainNetwork, rpc: safeUrl(config.suiRpcUrl) });
  const projects = await deps.store.projects.listAll().then(
    (list) => list.length,
    () => null,
  );
  return {
    mode: config.sandbox ? 'sandbox' : 'production',
    listen,
    publicBaseUrl: config.publicBaseUrl,
    chains,
    database: describeDatabase(config.databaseUrl),
    projects,
    platform: { solana: config.platformSolanaAddress, sui: config.platformSuiAddress },
    sponsor: deps.sponsor?.status().address ?? null,
    x402v2: Object.keys(deps.v2Schemes ?? {}),
  };
}
