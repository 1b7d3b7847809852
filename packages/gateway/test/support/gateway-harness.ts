/**
 * Starts the real gateway (buildApp over assembleDeps, listening on loopback) against
 * the sandbox chains and a local test upstream, with a seeded project, and funded
 * payer wallets on both chains. Integration tests drive it over real HTTP.
 */
import { randomBytes } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import type { PaymentWallet } from '@tollgate/client';
import { solanaWallet, suiWallet } from '@tollgate/client';
import { parseAmount, SOLANA_DEVNET_GENESIS_HASH } from '@tollgate/protocol';
import { newSolanaKey, newSuiKey, startSolanaSandbox, startSuiSandbox } from '@tollgate/sandbox';
import type { FastifyInstance } from 'fastify';
import { assembleDeps, buildApp, createV2Schemes, createVerifiers } from '../../src/app.ts';
import { SOLANA_MAINNET_GENESIS_HASH } from '../../src/chains/solana/index.ts';
import { SUI_MAINNET_CHAIN_ID } from '../../src/chains/sui/index.ts';
import { type Config, type EnvInput, loadConfig, withConfig } from '../../src/config.ts';
import type { Deps } from '../../src/deps.ts';
import { createLogger } from '../../src/logger.ts';
import { publishProject } from '../../src/marketplace/publish.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Endpoint, Project, Store } from '../../src/store/store.ts';
import { startTestUpstream, type TestUpstream } from './test-upstream.ts';

export type SolanaSandbox = Awaited<ReturnType<typeof startSolanaSandbox>>;
export type SuiSandbox = Awaited<ReturnType<typeof startSuiSandbox>>;

export interface Chains {
  solana: SolanaSandbox;
  sui: SuiSandbox;
  close(): Promise<void>;
}

/**
 * Sandbox chains; `as: 'mainnet'` makes them report mainnet's identities, for gateways
 * configured as production; `as: 'devnet'` gives Solana devnet's genesis (as sandbox
 * mode does), a network stock x402 clients know.
 */
export async function startChains(opts: { as?: 'mainnet' | 'devnet' } = {}): Promise<Chains> {
  const mainnet = opts.as === 'mainnet';
  const genesisHash = mainnet
    ? SOLANA_MAINNET_GENESIS_HASH
    : opts.as === 'devnet'
      ? SOLANA_DEVNET_GENESIS_HASH
      : undefined;
  const [solana, sui] = await Promise.all([
    startSolanaSandbox(genesisHash ? { genesisHash } : {}),
    startSuiSandbox(mainnet ? { chainId: SUI_MAINNET_CHAIN_ID } : {}),
  ]);
  return { solana, sui, close: async () => void (await Promise.allSettled([solana.close(), sui.close()])) };
}

export const UPSTREAM_KEY = 'origin-secret-key-123456';

export interface Harness {
  baseUrl: string;
  app: FastifyInstance;
  deps: Deps;
  store: Store;
  config: Readonly<Config>;
  chains: Chains;
  upstream: TestUpstream;
  project: Project;
  endpoints: Record<'items' | 'orders' | 'free' | 'big' | 'disabled', Endpoint>;
  recipients: { solana: { provider: string; platform: string }; sui: { provider: string; platform: string } };
  /** The x402 v2 fee payer on Solana (funded with SOL). */
  sponsor: { address: string };
  /** Moves the gateway's clock (not the chains') by this many ms from real time. */
  setClockOffset(ms: number): void;
  /** A fresh payer on each chain funded with `usdc` (decimal). */
  newPayer(chain: 'solana' | 'sui', usdc?: string): Promise<PaymentWallet>;
  close(): Promise<void>;
}

export async function startHarness(
  opts: {
    chains?: Chains;
    databaseUrl?: string;
    env?: EnvInput;
    storeSchema?: string;
    /** Collects the gateway's log lines (JSON) at the env's LOG_LEVEL instead of discarding them. */
    logLines?: string[];
  } = {},
): Promise<Harness> {
  const chains = opts.chains ?? (await startChains());
  const upstream = await startTestUpstream();
  const platform = { solana: newSolanaKey().address, sui: newSuiKey().address };
  const provider = { solana: newSolanaKey().address, sui: newSuiKey().address };
  // x402 v2 as sandbox mode sets it up: a funded fee payer, and the platform's USDC account.
  const sponsor = newSolanaKey();
  await chains.solana.faucet(sponsor.address, 0n, 10n * 1_000_000_000n);
  await chains.solana.faucet(platform.solana, 0n, 0n);
  const base = loadConfig(
    {
      TOLLGATE_NETWORK: 'sandbox',
      TOLLGATE_SECRET: randomBytes(32).toString('hex'),
      TOLLGATE_ADMIN_TOKEN: 'operator-token-0123456789abcdef',
      LOG_LEVEL: 'silent',
      TOLLGATE_HEALTH_INTERVAL_MS: '0',
      TOLLGATE_LEASE_MS: '5000',
      // Retry a failed paid attempt at once; paid-delivery.test.ts exercises the retry window.
      TOLLGATE_PAID_RETRY_AFTER_SEC: '0',
      PLATFORM_FEE_BPS: '1000',
      PLATFORM_FEE_MIN: '0.001',
      ...opts.env,
    },
    [],
  );
  const config = withConfig(base, {
    databaseUrl: opts.databaseUrl ?? 'sqlite::memory:',
    solanaRpcUrl: chains.solana.url,
    suiRpcUrl: chains.sui.url,
    platformSolanaAddress: platform.solana,
    platformSuiAddress: platform.sui,
    solanaSponsorKey: getBase58Decoder().decode(sponsor.secretKey),
    allowPrivateOrigins: true,
  });
  const store = await openStore(config.databaseUrl, opts.storeSchema ? { schema: opts.storeSchema } : {});
  let clockOffsetMs = 0;
  const v2 = await createV2Schemes(config);
  const logLines = opts.logLines;
  const deps = assembleDeps(config, store, await createVerifiers(config), {
    now: () => Date.now() + clockOffsetMs,
    v2Schemes: v2.schemes,
    log: logLines
      ? createLogger(config.logLevel, { write: (line) => void logLines.push(line) })
      : createLogger('silent'),
  });
  const app = await buildApp(deps);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  const published = await publishProject(store, {
    slug: `shop-${randomBytes(3).toString('hex')}`,
    name: 'Test shop',
    description: 'integration test project',
    category: 'test',
    owner: { chain: 'solana', address: provider.solana },
    api: {
      name: 'test upstream',
      baseUrl: `${upstream.url}/base`,
      auth: {
        type: 'header',
        name: 'x-api-key',
        secretEnc: deps.secretBox.seal(UPSTREAM_KEY),
        secretLast4: UPSTREAM_KEY.slice(-4),
      },
    },
    endpoints: [
      { method: 'GET', path: 'items', price: '0.01', timeoutMs: 2000 },
      { method: 'POST', path: 'orders/new', price: '0.02', timeoutMs: 2000 },
      { method: 'GET', path: 'free', price: '0', timeoutMs: 2000 },
      { method: 'GET', path: 'big', price: '0.01', timeoutMs: 2000 },
      { method: 'GET', path: 'off', price: '0.01', timeoutMs: 2000, enabled: false },
    ],
    rails: [
      { chain: 'solana', network: config.chainNetwork, providerRecipient: provider.solana },
      { chain: 'sui', network: config.chainNetwork, providerRecipient: provider.sui },
    ],
  });
  const { project } = published;
  const [items, orders, free, big, disabled] = published.endpoints as [
    Endpoint,
    Endpoint,
    Endpoint,
    Endpoint,
    Endpoint,
  ];
  const endpoints = { items, orders, free, big, disabled };

  return {
    baseUrl,
    app,
    deps,
    store,
    config,
    chains,
    upstream,
    project,
    endpoints,
    recipients: {
      solana: { provider: provider.solana, platform: platform.solana },
      sui: { provider: provider.sui, platform: platform.sui },
    },
    sponsor: { address: sponsor.address },
    setClockOffset(ms) {
      clockOffsetMs = ms;
    },
    async newPayer(chain, usdc = '10') {
      if (chain === 'solana') {
        const key = newSolanaKey();
        await chains.solana.faucet(key.address, parseAmount(usdc, 6));
        return solanaWallet({ secretKey: key.secretKey, rpcUrl: chains.solana.url });
      }
      const key = newSuiKey();
      await chains.sui.faucet(key.address, parseAmount(usdc, 6));
      return suiWallet({ secretKey: key.secretKey, rpcUrl: chains.sui.url });
    },
    async close() {
      await app.close();
      await deps.forwarder.close();
      await store.close();
      await upstream.close();
      if (!opts.chains) await chains.close();
    },
  };
}
