/**
 * Starts the real gateway (buildApp over assembleDeps, listening on loopback) against
 * the sandbox chains and a local test upstream, with a seeded project, and funded
 * payer wallets on both chains. Integration tests drive it over real HTTP.
 */
import { randomBytes } from 'node:crypto';
import type { PaymentWallet } from '@tollgate/client';
import { solanaWallet, suiWallet } from '@tollgate/client';
import { parseAmount } from '@tollgate/protocol';
import { newSolanaKey, newSuiKey, startSolanaSandbox, startSuiSandbox } from '@tollgate/sandbox';
import type { FastifyInstance } from 'fastify';
import { assembleDeps, buildApp, createVerifiers } from '../../src/app.ts';
import { type Config, type EnvInput, loadConfig, withConfig } from '../../src/config.ts';
import type { Deps } from '../../src/deps.ts';
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

export async function startChains(): Promise<Chains> {
  const [solana, sui] = await Promise.all([startSolanaSandbox(), startSuiSandbox()]);
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
  /** Moves the gateway's clock (not the chains') by this many ms from real time. */
  setClockOffset(ms: number): void;
  /** A fresh payer on each chain funded with `usdc` (decimal). */
  newPayer(chain: 'solana' | 'sui', usdc?: string): Promise<PaymentWallet>;
  close(): Promise<void>;
}

export async function startHarness(
  opts: { chains?: Chains; databaseUrl?: string; env?: EnvInput; storeSchema?: string } = {},
): Promise<Harness> {
  const chains = opts.chains ?? (await startChains());
  const upstream = await startTestUpstream();
  const platform = { solana: newSolanaKey().address, sui: newSuiKey().address };
  const provider = { solana: newSolanaKey().address, sui: newSuiKey().address };
  const base = loadConfig(
    {
      TOLLGATE_NETWORK: 'sandbox',
      TOLLGATE_SECRET: randomBytes(32).toString('hex'),
      TOLLGATE_ADMIN_TOKEN: 'operator-token-0123456789abcdef',
      LOG_LEVEL: 'silent',
      TOLLGATE_HEALTH_INTERVAL_MS: '0',
      TOLLGATE_LEASE_MS: '5000',
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
    allowPrivateOrigins: true,
  });
  const store = await openStore(config.databaseUrl, opts.storeSchema ? { schema: opts.storeSchema } : {});
  let clockOffsetMs = 0;
  const deps = assembleDeps(config, store, await createVerifiers(config), {
    now: () => Date.now() + clockOffsetMs,
  });
  const app = await buildApp(deps, { logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  const project = await store.projects.create({
    slug: `shop-${randomBytes(3).toString('hex')}`,
    name: 'Test shop',
    description: 'integration test project',
    category: 'test',
    owner: { chain: 'solana', address: provider.solana },
  });
  const api = await store.apis.create({
    projectId: project.id,
    name: 'test upstream',
    baseUrl: `${upstream.url}/base`,
    authType: 'header',
    authName: 'x-api-key',
    authSecretEnc: deps.secretBox.seal(UPSTREAM_KEY),
    authSecretLast4: UPSTREAM_KEY.slice(-4),
  });
  const ep = (method: string, path: string, price: string, enabled = true, timeoutMs = 2000) =>
    store.endpoints.create({
      projectId: project.id,
      apiId: api.id,
      method,
      path,
      price: parseAmount(price, 6),
      description: `${method} ${path}`,
      timeoutMs,
      enabled,
      inputSchema: null,
      outputSchema: null,
    });
  const endpoints = {
    items: await ep('GET', 'items', '0.01'),
    orders: await ep('POST', 'orders/new', '0.02'),
    free: await ep('GET', 'free', '0'),
    big: await ep('GET', 'big', '0.01'),
    disabled: await ep('GET', 'off', '0.01', false),
  };
  await store.rails.upsert({
    projectId: project.id,
    chain: 'solana',
    network: config.chainNetwork,
    providerRecipient: provider.solana,
  });
  await store.rails.upsert({
    projectId: project.id,
    chain: 'sui',
    network: config.chainNetwork,
    providerRecipient: provider.sui,
  });

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
