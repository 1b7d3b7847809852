/**
 * A real gateway app (buildApp over assembleDeps and an in-memory SQLite store)
 * for the provider-side tests, with an adjustable clock, captured pino output,
 * and wallets that sign like real ones on both chains.
 */
import { randomBytes } from 'node:crypto';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { generateKeyPairSigner, getBase58Decoder, signBytes } from '@solana/kit';
import type { FastifyInstance } from 'fastify';
import { assembleDeps, buildApp } from '../../src/app.ts';
import { type Config, type EnvInput, loadConfig, withConfig } from '../../src/config.ts';
import type { Deps } from '../../src/deps.ts';
import { createLogger } from '../../src/logger.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';

export const ADMIN_TOKEN = 'operator-token-0123456789abcdef';
export const PUBLIC_BASE_URL = 'https://gateway.tollgate.test';

export interface TestWallet {
  chain: 'sui' | 'solana';
  address: string;
  sign(message: string): Promise<string>;
}

export async function solanaWallet(encoding: 'base58' | 'base64' = 'base58'): Promise<TestWallet> {
  const signer = await generateKeyPairSigner();
  return {
    chain: 'solana',
    address: signer.address,
    async sign(message) {
      const sig = await signBytes(signer.keyPair.privateKey, new TextEncoder().encode(message));
      return encoding === 'base58' ? getBase58Decoder().decode(sig) : Buffer.from(sig).toString('base64');
    },
  };
}

export function suiWallet(kp: Ed25519Keypair = Ed25519Keypair.generate()): TestWallet {
  return {
    chain: 'sui',
    address: kp.toSuiAddress(),
    async sign(message) {
      return (await kp.signPersonalMessage(new TextEncoder().encode(message))).signature;
    },
  };
}

export interface ProviderApp {
  app: FastifyInstance;
  deps: Deps;
  store: Store;
  config: Readonly<Config>;
  /** Set when started with `listen: true`. */
  baseUrl: string;
  /** Every pino line the app wrote (when started with `captureLogs: true`). */
  logs: string[];
  /** Moves the gateway's clock by this many ms from real time. */
  setClockOffset(ms: number): void;
  close(): Promise<void>;
}

export const PLATFORM = {
  sui: `0x${'ab'.repeat(32)}`,
  solana: 'So11111111111111111111111111111111111111112',
};

export async function startProviderApp(
  opts: { env?: EnvInput; patch?: Partial<Config>; listen?: boolean; captureLogs?: boolean } = {},
): Promise<ProviderApp> {
  const base = loadConfig(
    {
      TOLLGATE_NETWORK: 'sandbox',
      TOLLGATE_SECRET: randomBytes(32).toString('hex'),
      TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      PUBLIC_BASE_URL,
      LOG_LEVEL: opts.captureLogs ? 'trace' : 'silent',
      TOLLGATE_HEALTH_INTERVAL_MS: '0',
      PLATFORM_FEE_BPS: '100',
      PLATFORM_FEE_MIN: '0.001',
      ...opts.env,
    },
    [],
  );
  const config = withConfig(base, {
    databaseUrl: 'sqlite::memory:',
    platformSolanaAddress: PLATFORM.solana,
    platformSuiAddress: PLATFORM.sui,
    allowPrivateOrigins: true,
    ...opts.patch,
  });
  const store = await openStore(config.databaseUrl);
  let offset = 0;
  const logs: string[] = [];
  const log = opts.captureLogs
    ? createLogger(config.logLevel, { write: (line) => void logs.push(line) })
    : createLogger('silent');
  const deps = assembleDeps(config, store, {}, { now: () => Date.now() + offset, log });
  const app = await buildApp(deps);
  let baseUrl = '';
  if (opts.listen) {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  } else {
    await app.ready();
  }
  return {
    app,
    deps,
    store,
    config,
    baseUrl,
    logs,
    setClockOffset(ms) {
      offset = ms;
    },
    async close() {
      await app.close();
      await deps.forwarder.close();
      await store.close();
    },
  };
}

export interface Json {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read response fields directly and assert on them
  body: any;
  headers: Record<string, unknown>;
  raw: string;
}

/** One in-process request; `token` goes in the Authorization header. */
export async function call(
  app: FastifyInstance,
  method: string,
  url: string,
  opts: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<Json> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers['authorization'] = `Bearer ${opts.token}`;
  let payload: string | undefined;
  if (opts.rawBody !== undefined) {
    payload = opts.rawBody;
    headers['content-type'] ??= 'application/json';
  } else if (opts.body !== undefined) {
    payload = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  const res = await app.inject({
    method: method as 'GET',
    url,
    headers,
    ...(payload !== undefined ? { payload } : {}),
  });
  let body: unknown;
  try {
    body = res.body ? JSON.parse(res.body) : undefined;
  } catch {
    body = res.body;
  }
  return { status: res.statusCode, body, headers: res.headers, raw: res.body };
}

/** The whole sign-in dance; returns the access token. */
export async function signIn(app: FastifyInstance, wallet: TestWallet): Promise<string> {
  const challenge = await call(app, 'POST', '/v1/auth/challenge', {
    body: { chain: wallet.chain, address: wallet.address },
  });
  if (challenge.status !== 200) throw new Error(`challenge failed: ${challenge.raw}`);
  const verified = await call(app, 'POST', '/v1/auth/verify', {
    body: {
      chain: wallet.chain,
      address: wallet.address,
      message: challenge.body.message,
      signature: await wallet.sign(challenge.body.message),
    },
  });
  if (verified.status !== 200) throw new Error(`verify failed: ${verified.raw}`);
  return verified.body.accessToken;
}

/** A loopback origin address; registration needs allowPrivateOrigins, which the harness turns on. */
export const ORIGIN = 'http://127.0.0.1:9/base';
