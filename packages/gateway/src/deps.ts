/** What route handlers get: every dependency, chosen by app.ts. */
import type { ChainId, ChainVerifier } from './chains/chain.ts';
import type { SponsorWatch } from './chains/solana/sponsor-watch.ts';
import type { Config } from './config.ts';
import type { SecretBox } from './crypto/secret-box.ts';
import type { HealthMonitor } from './health/endpoint-health.ts';
import type { InferenceRuntime } from './inference/runtime.ts';
import type { Logger } from './logger.ts';
import type { Catalog } from './marketplace/catalog.ts';
import type { Metrics } from './metrics.ts';
import type { ProofChecks } from './payments/gate.ts';
import type { RequirementTokens } from './payments/requirement-token.ts';
import type { Settlement } from './payments/settle.ts';
import type { V2PayTo, V2Schemes } from './payments/v2-offer.ts';
import type { Forwarder } from './proxy/forward.ts';
import type { Store } from './store/store.ts';

export interface Deps {
  config: Readonly<Config>;
  store: Store;
  /** The one logger (app.ts creates it; Fastify and every module that logs use it). */
  log: Logger;
  metrics: Metrics;
  /** Verifiers by chain for the configured network. */
  verifiers: Partial<Record<ChainId, ChainVerifier>>;
  /** Encrypts origin secrets at rest (AES-256-GCM under a key derived from the server secret). */
  secretBox: SecretBox;
  /** Signs and checks paymentRequirementId tokens. */
  tokens: RequirementTokens;
  /** Proof decoding, binding and on-chain verification. */
  proofs: ProofChecks;
  /** The life of every paid request (admit, lease, deliver | fail | abandon): marketplace and inference. */
  settlement: Settlement;
  /** Cached provider catalogue for the /p hot path. */
  catalog: Catalog;
  forwarder: Forwarder;
  health: HealthMonitor;
  /** Model catalogue and upstreams for /v1/chat/completions, /v1/embeddings and conversations. */
  inference: InferenceRuntime;
  /** x402 v2 `exact` schemes configured now, by chain (DESIGN §4.12); absent or empty: no v2 offers. */
  v2Schemes?: V2Schemes;
  /** The platform address a v2 payment pays on each chain; absent: none. */
  v2PayTo?: V2PayTo;
  /** The x402 v2 fee payer's balance watch (Solana), when one is configured. */
  sponsor?: SponsorWatch | null;
  /** Wall clock in ms; injectable for expiry tests. */
  now: () => number;
}
