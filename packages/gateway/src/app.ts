/**
 * Composition root: the only file that picks concrete implementations (store
 * backend, chain verifiers). `buildApp` returns a Fastify app without listening.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SOLANA_MAINNET_CAIP2, suiCaip2, USDC_SUI_COIN_TYPE } from '@tollgate/protocol';
import type { ChainId, ChainVerifier } from './chains/chain.ts';
import type { SolanaSponsor } from './chains/solana/sponsor.ts';
import { watchSponsor } from './chains/solana/sponsor-watch.ts';
import type { Config } from './config.ts';
import { keyRing } from './crypto/keys.ts';
import { createSecretBox } from './crypto/secret-box.ts';
import type { Deps } from './deps.ts';
import { createHealthMonitor, type ProbeTarget } from './health/endpoint-health.ts';
import { buildApp, type HttpApp } from './http/server.ts';
import { createInferenceRuntime } from './inference/runtime.ts';
import { timedInference } from './inference/timed.ts';
import { createLogger } from './logger.ts';
import { createCatalog } from './marketplace/catalog.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { parseSolana } from './ops/platform-keys.ts';
import { createProofChecks } from './payments/gate.ts';
import type { PaidRequest } from './payments/paid-request.ts';
import { createRequirementTokens } from './payments/requirement-token.ts';
import { createSettlement } from './payments/settle.ts';
import type { V2PayTo, V2Schemes } from './payments/v2-offer.ts';
import { createForwarder } from './proxy/forward.ts';
import type { SandboxChains } from './sandbox-mode.ts';
import { askingChain, openingDatabase } from './startup/problems.ts';
import { openStore } from './store/open-store.ts';
import type { Store } from './store/store.ts';

export { buildApp } from './http/server.ts';

export interface Gateway {
  app: HttpApp;
  deps: Deps;
  /** Starts the background jobs (active health checks, pruning); call once the catalogue is ready. */
  start(): void;
  close(): Promise<void>;
}

/**
 * Builds every dependency from a config, a store and the verifiers. Production
 * (createGateway) and tests use the same function; tests override what they fake.
 */
export function assembleDeps(
  config: Readonly<Config>,
  store: Store,
  verifiers: Partial<Record<ChainId, ChainVerifier>>,
  overrides: Partial<Deps> = {},
): Deps {
  if (!config.secret) throw new Error('config.secret is required (sandbox mode generates one)');
  // The one logger: every module that logs gets it here, at construction.
  const log = overrides.log ?? createLogger(config.logLevel);
  const metrics = overrides.metrics ?? createMetrics();
  const now = overrides.now ?? Date.now;
  const tokens =
    overrides.tokens ??
    createRequirementTokens(keyRing(config.secret, config.previousSecret, 'requirement-token/v1'));
  const proofs =
    overrides.proofs ??
    createProofChecks({
      tokens,
      verifiers,
      metrics,
      now,
      skewMs: config.clockSkewSec * 1000,
      lateProofMs: LATE_PROOF_MS,
      log,
      ...(overrides.v2Schemes ? { v2Schemes: overrides.v2Schemes } : {}),
      v2PayTo: overrides.v2PayTo ?? platformPayTo(config),
    });
  const settlement =
    overrides.settlement ??
    createSettlement({
      checks: proofs,
      tokens,
      redemptions: store.redemptions,
      metrics,
      now,
      requirementTtlSec: config.requirementTtlSec,
      leaseMs: config.leaseMs,
      skewMs: config.clockSkewSec * 1000,
      paidRetryAfterSec: config.paidRetryAfterSec,
      publicBaseUrl: config.publicBaseUrl.replace(/\/+$/, ''),
      ...(overrides.v2Schemes ? { v2Schemes: overrides.v2Schemes } : {}),
      v2PayTo: overrides.v2PayTo ?? platformPayTo(config),
      onV2Sent: (paid) => recordProviderShare(store, paid, now()),
      log,
    });
  return {
    config,
    store,
    log,
    metrics,
    verifiers,
    secretBox: createSecretBox(keyRing(config.secret, config.previousSecret, 'origin-secrets/v1')),
    tokens,
    proofs,
    settlement,
    v2PayTo: overrides.v2PayTo ?? platformPayTo(config),
    catalog: createCatalog(store, CATALOG_TTL_MS, now),
    forwarder: createForwarder({
      allowPrivate: config.allowPrivateOrigins,
      maxResponseBytes: config.maxResponseBytes,
    }),
    health: createHealthMonitor({ failureThreshold: 5, cooldownMs: 30_000, now, metrics, log }),
    now,
    ...overrides,
    inference: timedInference(overrides.inference ?? createInferenceRuntime(config), metrics),
  };
}

/** A v2 payment pays the whole amount to the platform's address on its chain. */
function platformPayTo(config: Readonly<Config>): V2PayTo {
  return (chain) => (chain === 'solana' ? config.platformSolanaAddress : config.platformSuiAddress);
}

/**
 * A v2 payment on the marketplace landed with the whole amount at the platform: the
 * provider's share becomes a payable, paid out later by the operator (ops/payout.ts).
 */
async function recordProviderShare(store: Store, paid: PaidRequest, nowMs: number): Promise<void> {
  const { payment } = paid;
  const share = payment.option.splits.find((s) => s.recipientType === 'provider');
  if (!payment.projectId || !share || share.amount === 0n) return;
  await store.payables.record({
    redemptionId: paid.redemptionId,
    projectId: payment.projectId,
    chain: payment.chain,
    network: payment.network,
    recipient: share.payTo,
    amount: share.amount,
    nowMs,
  });
}

/** A proof for a payment made in time may arrive this long after expiresAt (slow chains, retries). */
const LATE_PROOF_MS = 60 * 60 * 1000;
const CATALOG_TTL_MS = 1000;

/** Builds the production gateway for a config: opens the store, picks verifiers, builds the app. */
export async function createGateway(
  config: Readonly<Config>,
  opts: { logger?: boolean; sandbox?: SandboxChains } = {},
): Promise<Gateway> {
  // The one logger, made first: the store reports migrations and pool errors through it.
  const log = createLogger(opts.logger === false ? 'silent' : config.logLevel);
  const store = await openingDatabase(config.databaseUrl, openStore(config.databaseUrl, { logger: log }));
  const metrics = createMetrics(); // shared with the verifiers (chain lookups)
  const v2 = await createV2Schemes(config);
  const deps = assembleDeps(config, store, await createVerifiers(config, metrics), {
    log,
    metrics,
    v2Schemes: v2.schemes,
  });
  const app = await buildApp(deps, opts);
  const sponsorWatch = v2.sponsor
    ? watchSponsor({
        sponsor: v2.sponsor,
        lowLamports: BigInt(config.sponsorLowLamports),
        metrics,
        log: deps.log,
      })
    : null;
  deps.sponsor = sponsorWatch;
  let prune: NodeJS.Timeout | undefined;
  return {
    app,
    deps,
    start() {
      if (prune) return;
      sponsorWatch?.start();
      deps.health.start(
        config.healthIntervalMs,
        () => probeTargets(store),
        (t) => deps.forwarder.probe(t.baseUrl),
      );
      // Delivered responses are kept for replays for a while (the redemption rows stay
      // forever); expired sign-in challenges and sessions go.
      prune = setInterval(() => void pruneStore(store, config, app.log), 10 * 60_000);
      prune.unref();
    },
    async close() {
      clearInterval(prune);
      sponsorWatch?.stop();
      deps.health.stop();
      await app.close();
      await deps.forwarder.close();
      await deps.inference.close();
      await store.close();
    },
  };
}

export async function pruneStore(
  store: Store,
  config: Readonly<Config>,
  log: { warn(obj: unknown, msg: string): void },
  now = Date.now(),
): Promise<{ responses: number; signIns: number }> {
  const fail = (what: string) => (err: unknown) => {
    log.warn({ err }, `pruning ${what} failed`);
    return 0;
  };
  const responses = await store.redemptions
    .pruneResponses(now - config.responseRetentionHours * 3_600_000)
    .catch(fail('stored responses'));
  const signIns = await store.auth.pruneExpired(now).catch(fail('expired sign-ins'));
  return { responses, signIns };
}

/** Every API origin with its enabled endpoints, for active health checks (one query). */
export async function probeTargets(store: Store): Promise<ProbeTarget[]> {
  const byApi = new Map<string, ProbeTarget>();
  for (const row of await store.endpoints.listEnabledOrigins()) {
    let target = byApi.get(row.apiId);
    if (!target) {
      target = { apiId: row.apiId, baseUrl: row.baseUrl, endpoints: [] };
      byApi.set(row.apiId, target);
    }
    target.endpoints.push({ id: row.endpointId, project: row.projectSlug });
  }
  return [...byApi.values()];
}

export async function createVerifiers(
  config: Readonly<Config>,
  metrics?: Metrics,
): Promise<Partial<Record<ChainId, ChainVerifier>>> {
  const verifiers: Partial<Record<ChainId, ChainVerifier>> = {};
  // Each chain's lookups by outcome (rpc, negative_cache_hit, over_capacity, ...): chains/guard.ts.
  const onLookup = (chain: ChainId, outcome: string) => metrics?.chainLookups.inc({ chain, outcome });
  if (config.solanaRpcUrl) {
    const { createSolanaVerifier } = await import('./chains/solana/index.ts');
    verifiers.solana = createSolanaVerifier({
      rpcUrl: config.solanaRpcUrl,
      network: config.chainNetwork,
      commitment: config.solanaCommitment,
      onLookup,
    });
  }
  if (config.suiRpcUrl) {
    const { createSuiVerifier } = await import('./chains/sui/index.ts');
    verifiers.sui = createSuiVerifier({ rpcUrl: config.suiRpcUrl, network: config.chainNetwork, onLookup });
  }
  return verifiers;
}

/**
 * The x402 v2 `exact` schemes this config can serve (DESIGN §4.12): Solana when a fee
 * payer (sponsor) key is configured, Sui whenever Sui is (its payers pay their own gas).
 */
export async function createV2Schemes(
  config: Readonly<Config>,
): Promise<{ schemes: V2Schemes; sponsor: SolanaSponsor | null }> {
  const schemes: V2Schemes = {};
  let sponsor: SolanaSponsor | null = null;
  const mainnet = config.network === 'mainnet';
  if (config.solanaRpcUrl && config.solanaSponsorKey) {
    const { createSolanaSponsor } = await import('./chains/solana/sponsor.ts');
    sponsor = await createSolanaSponsor({
      rpcUrl: config.solanaRpcUrl,
      secretKey: loadSponsorKey(config.solanaSponsorKey),
      network: config.chainNetwork,
      commitment: config.solanaCommitment,
      ...(mainnet ? { caip2: SOLANA_MAINNET_CAIP2 } : {}),
      ...(config.sponsorMaxPerPayerPerMin > 0
        ? { maxPerPayerPerMinute: config.sponsorMaxPerPayerPerMin }
        : {}),
    });
    schemes.solana = sponsor;
  }
  if (config.suiRpcUrl) {
    const { createSuiExactV2 } = await import('./chains/sui/exact-v2.ts');
    const caip2 = mainnet
      ? 'sui:mainnet'
      : suiCaip2(
          await askingChain(
            'SUI_RPC_URL',
            config.suiRpcUrl,
            suiChainId(config.suiRpcUrl, config.chainNetwork),
          ),
        );
    schemes.sui = createSuiExactV2({
      rpcUrl: config.suiRpcUrl,
      network: config.chainNetwork,
      caip2,
      coinType: USDC_SUI_COIN_TYPE,
    });
  }
  return { schemes, sponsor };
}

/** The sponsor key from TOLLGATE_SOLANA_SPONSOR_KEY: a key file, or the key itself. */
function loadSponsorKey(given: string): Uint8Array {
  const isFile = existsSync(given);
  return parseSolana(
    isFile ? readFileSync(given, 'utf8') : given,
    isFile ? given : 'TOLLGATE_SOLANA_SPONSOR_KEY',
  );
}

async function suiChainId(rpcUrl: string, network: string): Promise<string> {
  const { SuiGrpcClient } = await import('@mysten/sui/grpc');
  const client = new SuiGrpcClient({ network, baseUrl: rpcUrl });
  const { chainIdentifier } = await client.core.getChainIdentifier({ signal: AbortSignal.timeout(10_000) });
  return chainIdentifier;
}
