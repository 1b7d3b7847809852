/** What route handlers get: every dependency, chosen by app.ts. */
import type { ChainId, ChainVerifier } from './chains/chain.ts';
import type { Config } from './config.ts';
import type { SecretBox } from './crypto/secret-box.ts';
import type { Metrics } from './metrics.ts';
import type { Store } from './store/store.ts';

export interface Deps {
  config: Readonly<Config>;
  store: Store;
  metrics: Metrics;
  /** Verifiers by chain for the configured network. */
  verifiers: Partial<Record<ChainId, ChainVerifier>>;
  /** Encrypts origin secrets at rest (AES-256-GCM under a key derived from the server secret). */
  secretBox: SecretBox;
  /** Wall clock in ms; injectable for expiry tests. */
  now: () => number;
}
