/**
 * The processes `npm run bench:scaling` needs, each pinned like the main bench's
 * (bench/lib/stack.ts): the sandbox chains, the reference upstream, the minimal
 * forwarder, the bare 402 server, and any number of real gateways (bench/servers/gateway.ts)
 * on the database each is given. Gateways started from one `GatewayIdentity` share the
 * secret and the platform and provider addresses, as processes of one deployment do, so a
 * proof made against one is accepted by every other.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newSolanaKey, newSuiKey } from '@tollgate/client';
import { type Child, spawnPinned } from './children.ts';

const SERVERS = new URL('../servers/', import.meta.url).pathname;
const node = process.execPath;
const server = (name: string) => join(SERVERS, name);

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

export interface BaseStack {
  chains: Child;
  upstream: Child;
  floor: Child;
  solanaRpcUrl: string;
  suiRpcUrl: string;
  faucetUrl: string;
  upstreamBase: string;
  floorBase: string;
}

/** Chains (on `chainCpu`), the upstream and the minimal forwarder (on `serverCpu`). */
export async function startBase(o: { serverCpu: string; chainCpu: string }): Promise<BaseStack> {
  const chains = await spawnPinned({
    name: 'chains',
    cpu: o.chainCpu,
    command: node,
    args: [server('chains.ts')],
  });
  const upstream = await spawnPinned({
    name: 'upstream',
    cpu: o.serverCpu,
    command: node,
    args: [server('upstream.ts')],
  });
  const upstreamBase = `http://127.0.0.1:${upstream.info['port']}`;
  const floor = await spawnPinned({
    name: 'undici-forward',
    cpu: o.serverCpu,
    command: node,
    args: [server('undici-forward.ts')],
    env: { BENCH_UPSTREAM_URL: upstreamBase },
  });
  return {
    chains,
    upstream,
    floor,
    solanaRpcUrl: String(chains.info['solanaUrl']),
    suiRpcUrl: String(chains.info['suiUrl']),
    faucetUrl: String(chains.info['controlUrl']),
    upstreamBase,
    floorBase: `http://127.0.0.1:${floor.info['port']}`,
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
  const skip = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (!skip.has(k)) headers[k] = v;
  });
  writeFileSync(join(o.dir, '402-body.json'), body);
  writeFileSync(join(o.dir, '402-headers.json'), JSON.stringify(headers));
  const bare = await spawnPinned({
    name: 'bare-402',
    cpu: o.cpu,
    command: node,
    args: [server('bare-402.ts')],
    env: {
      BENCH_402_BODY_FILE: join(o.dir, '402-body.json'),
      BENCH_402_HEADERS_FILE: join(o.dir, '402-headers.json'),
    },
  });
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
