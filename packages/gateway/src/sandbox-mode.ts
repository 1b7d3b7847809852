/**
 * Sandbox mode (`npm start` with no configuration): local Sui and Solana chains
 * in-process, a generated secret kept in the data directory, sandbox platform and
 * provider wallets, a demo upstream API, and a seeded demo project to buy from.
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { SOLANA_DEVNET_GENESIS_HASH } from '@tollgate/protocol';
import {
  type DemoApi,
  loadOrCreateSolanaKey,
  loadOrCreateSuiKey,
  startDemoApi,
  startSolanaSandbox,
  startSuiSandbox,
} from '@tollgate/sandbox';
import { type Config, withConfig } from './config.ts';
import type { Deps } from './deps.ts';
import { publishProject } from './marketplace/publish.ts';

export interface SandboxChains {
  solana: Awaited<ReturnType<typeof startSolanaSandbox>>;
  sui: Awaited<ReturnType<typeof startSuiSandbox>>;
  demoApi: DemoApi;
}

export interface SandboxMode {
  config: Readonly<Config>;
  chains: SandboxChains;
  /** Creates or refreshes the demo project (idempotent). */
  seed(deps: Deps): Promise<void>;
  banner(baseUrl: string): string;
  close(): Promise<void>;
}

export const DEMO_SLUG = 'demo';

function readOrCreate(path: string, make: () => string): string {
  if (existsSync(path)) {
    keepPrivate(path, 0o600);
    return readFileSync(path, 'utf8').trim();
  }
  const value = make();
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  return value;
}

/**
 * The data directory holds the master secret, the operator token and wallet keys: files
 * are 0600 and directories 0700 (created so; tightened if an older version left them
 * open). Best effort on what belongs to someone else.
 */
function keepPrivate(path: string, mode: 0o600 | 0o700): void {
  try {
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, mode);
  } catch {
    // not ours to change
  }
}

export async function startSandboxMode(base: Readonly<Config>): Promise<SandboxMode> {
  const dir = base.dataDir;
  const keys = join(dir, 'sandbox');
  mkdirSync(keys, { recursive: true, mode: 0o700 });
  keepPrivate(keys, 0o700);
  const secret =
    base.secret ?? readOrCreate(join(dir, 'secret'), () => randomBytes(32).toString('base64url'));
  const adminToken =
    base.adminToken ??
    readOrCreate(join(dir, 'admin-token'), () => `tgadmin_${randomBytes(24).toString('base64url')}`);
  const platformSolana = loadOrCreateSolanaKey(join(keys, 'platform-solana.json'));
  const platformSui = loadOrCreateSuiKey(join(keys, 'platform-sui.key'));
  const providerSolana = loadOrCreateSolanaKey(join(keys, 'provider-solana.json'));
  const providerSui = loadOrCreateSuiKey(join(keys, 'provider-sui.key'));
  // The x402 v2 fee payer: stock v2 clients pay USDC only, the sponsor pays the SOL fee.
  const sponsorPath = join(keys, 'sponsor-solana.json');
  const sponsorSolana = loadOrCreateSolanaKey(sponsorPath);
  for (const file of readdirSync(keys)) keepPrivate(join(keys, file), 0o600);

  // The local Solana chain presents devnet's identity: stock x402 clients know no other test network.
  const [solana, sui, demoApi] = await Promise.all([
    startSolanaSandbox({ genesisHash: SOLANA_DEVNET_GENESIS_HASH }),
    startSuiSandbox(),
    startDemoApi(),
  ]);
  // The sandbox chains start empty: give the sponsor SOL for fees, and the platform its USDC
  // account (a v2 transfer goes to it, and the stock client does not create it).
  await solana.faucet(sponsorSolana.address, 0n, 100n * 1_000_000_000n);
  await solana.faucet(platformSolana.address, 0n);
  // Gas for the platform's Sui wallet, so the payout command can pay providers in sandbox too.
  await sui.faucet(platformSui.address, 0n);
  const config = withConfig(base, {
    secret,
    adminToken,
    solanaRpcUrl: solana.url,
    suiRpcUrl: sui.url,
    platformSolanaAddress: platformSolana.address,
    platformSuiAddress: platformSui.address,
    solanaSponsorKey: base.solanaSponsorKey ?? sponsorPath,
    allowPrivateOrigins: true,
  });
  const chains: SandboxChains = { solana, sui, demoApi };

  return {
    config,
    chains,
    async seed(deps) {
      await publishProject(deps.store, {
        slug: DEMO_SLUG,
        name: 'Tollgate demo API',
        description: 'Weather, echo and fortunes from a local demo upstream, sold per request.',
        category: 'demo',
        owner: { chain: 'solana', address: providerSolana.address },
        // Stock x402 v2 clients (@x402/fetch) can buy from the demo too.
        x402Exact: true,
        // The demo upstream listens on a new port at every start.
        api: { name: 'demo upstream', baseUrl: demoApi.url },
        endpoints: [
          {
            method: 'GET',
            path: 'weather',
            price: '0.01',
            description: 'Weather forecast for a city (?city=Oslo)',
          },
          { method: 'POST', path: 'echo', price: '0.005', description: 'Echoes the JSON body back' },
          {
            method: 'GET',
            path: 'fortune',
            price: '0',
            description: 'A fortune; free, only the platform fee',
          },
        ],
        rails: [
          { chain: 'solana', network: config.chainNetwork, providerRecipient: providerSolana.address },
          { chain: 'sui', network: config.chainNetwork, providerRecipient: providerSui.address },
        ],
      });
      deps.catalog.invalidate(DEMO_SLUG);
    },
    banner(baseUrl) {
      return [
        '',
        `Tollgate sandbox is running at ${baseUrl}`,
        `  Solana sandbox RPC  ${solana.url}`,
        `  x402 v2 sponsor     ${sponsorSolana.address} (pays Solana fees for stock x402 clients)`,
        `  Sui sandbox gRPC    ${sui.url}`,
        `  demo upstream       ${demoApi.url}`,
        `  data directory      ${dir}`,
        `  operator token      in ${join(dir, 'admin-token')}`,
        '',
        `Try it:  curl -i ${baseUrl}/p/${DEMO_SLUG}/weather?city=Oslo   (answers 402 Payment Required)`,
        '         npm run demo                                   (funds a wallet, pays on both chains)',
        `         curl ${baseUrl}/v1/models                       (inference: tollgate-dev-chat, local embeddings)`,
        `         curl ${baseUrl}/v1/directory/apis               (what providers sell here)`,
        '',
      ].join('\n');
    },
    async close() {
      await Promise.allSettled([solana.close(), sui.close(), demoApi.close()]);
    },
  };
}
