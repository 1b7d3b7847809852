/**
 * The processes `npm run bench:scaling` needs, each pinned like the main bench's
 * (bench/lib/stack.ts): the sandbox chains, the reference upstream and the minimal
 * forwarder (started by bench/lib/base-servers.ts, shared with the main bench), the bare 402 server, and any number of real gateways (bench/servers/gateway.ts)
 * on the database each is given. Gateways started from one `GatewayIdentity` share the
 * secret and the platform and provider addresses, as processes of one deployment do, so a
 * proof made against one is accepted by every other.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { newSolanaKey, newSuiKey } from '@tollgate/client';
import { type BaseStack, node, server, spawnBare402, stableHeaders } from './base-servers.ts';
import { type Child, spawnPinned } from './children.ts';

export interface GatewayIdentity {
  secret: string;
  platformSolana: string;
  platformSui: string;
  providerSolana: string;
  providerSui: string;
}

export function newIdentity(): GatewayIdentity {
  return {
    secret: randomBytes(32).toString('hex'),
    platformSolana: newSolanaKey().address,
    platformSui: newSuiKey().address,
    providerSolana: newSolanaKey().address,
    providerSui: newSuiKey().address,
  };
}

export interface GatewayProcess {
  child: Child;
  /** e.g. http://127.0.0.1:1234/p/bench */
  base: string;
}

/** One real gateway process (same environment as the main bench's), serving project "bench". */
export async function startGateway(o: {
  name: string;
  cpu: string;
  dir: string;
  databaseUrl: string;
  identity: GatewayIdentity;
  stack: BaseStack;
  logLevel: string;
}): Promise<GatewayProcess> {
  const dataDir = join(o.dir, `${o.name}-data`);
  mkdirSync(dataDir, { recursive: true });
  const child = await spawnPinned({
    name: o.name,
    cpu: o.cpu,
    command: node,
    args: [server('gateway.ts')],
    env: {
      TOLLGATE_NETWORK: 'sandbox',
      TOLLGATE_SECRET: o.identity.secret,
      TOLLGATE_DATA_DIR: dataDir,
      DATABASE_URL: o.databaseUrl,
      SOLANA_RPC_URL: o.stack.solanaRpcUrl,
      SUI_RPC_URL: o.stack.suiRpcUrl,
      PLATFORM_SOLANA_ADDRESS: o.identity.platformSolana,
      PLATFORM_SUI_ADDRESS: o.identity.platformSui,
      // Free routes need price 0 and fee 0; the paid route keeps the default 1 % fee.
      PLATFORM_FEE_MIN: '0',
      TOLLGATE_ALLOW_PRIVATE_ORIGINS: '1',
      LOG_LEVEL: o.logLevel,
      BENCH_UPSTREAM_URL: o.stack.upstreamBase,
      BENCH_PROVIDER_SOLANA: o.identity.providerSolana,
      BENCH_PROVIDER_SUI: o.identity.providerSui,
    },
  });
  const base = `http://127.0.0.1:${child.info['port']}/p/bench`;
  await expectStatus(`${base}/paid`, 402, o.name);
  await expectStatus(`${base}/free`, 200, o.name);
  return { child, base };
}

/** The bare node:http server replaying a gateway's own 402 bytes (bench/servers/bare-402.ts). */
export async function startBare402(o: {
  cpu: string;
  dir: string;
  gatewayBase: string;
}): Promise<{ child: Child; url: string }> {
  const res = await fetch(`${o.gatewayBase}/paid`);
  const body = Buffer.from(await res.arrayBuffer());
  const bare = await spawnBare402({ cpu: o.cpu, dir: o.dir, body, headers: stableHeaders(res) });
  const url = `http://127.0.0.1:${bare.info['port']}/p/bench/paid`;
  await expectStatus(url, 402, 'bare 402');
  return { child: bare, url };
}

export async function expectStatus(url: string, status: number, what: string): Promise<void> {
  const res = await fetch(url);
  const text = await res.text();
  if (res.status !== status)
    throw new Error(`${what}: ${url} answered ${res.status}, expected ${status}: ${text.slice(0, 300)}`);
}
