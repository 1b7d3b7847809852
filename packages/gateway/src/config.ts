/**
 * Configuration: environment variables (and an optional `--config` JSON file with
 * the same names) parsed once into a frozen Config. Nothing else reads process.env.
 * Invalid values fail at boot with one clear line per problem.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseAmount, USDC_DECIMALS } from '@tollgate/protocol';
import { z } from 'zod';

const bool = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const url = z.url();

/** `*` (any origin), `none`, or comma-separated origins such as `https://app.example.com`, normalized. */
const corsOrigins = z
  .string()
  .trim()
  .transform((v, ctx): '*' | readonly string[] => {
    if (v === '*') return '*';
    if (v.toLowerCase() === 'none') return Object.freeze([]);
    const origins: string[] = [];
    for (const item of v.split(',').map((o) => o.trim())) {
      const u = URL.parse(item);
      const bare = u && /^https?:$/.test(u.protocol) && u.pathname === '/' && !u.search && !u.hash;
      if (!bare || u.username || u.password) {
        ctx.addIssue({
          code: 'custom',
          message: '*, none, or comma-separated origins (no path) like https://app.example.com',
        });
        return z.NEVER;
      }
      origins.push(u.origin);
    }
    return Object.freeze(origins);
  });

const envSchema = z.object({
  PORT: int(0, 65535).default(8402),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_BASE_URL: url.optional(),
  DATABASE_URL: z.string().min(1).optional(),
  TOLLGATE_DATA_DIR: z.string().min(1).default('./data'),
  TOLLGATE_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  TOLLGATE_SECRET_PREVIOUS: z.string().min(32).optional(),
  TOLLGATE_ADMIN_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
  TOLLGATE_NETWORK: z.enum(['sandbox', 'mainnet']).default('sandbox'),
  SOLANA_RPC_URL: url.optional(),
  SUI_RPC_URL: url.optional(),
  SOLANA_COMMITMENT: z.enum(['confirmed', 'finalized']).default('confirmed'),
  PLATFORM_SUI_ADDRESS: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'a 0x-prefixed 32-byte Sui address')
    .transform((a) => a.toLowerCase())
    .optional(),
  PLATFORM_SOLANA_ADDRESS: z
    .string()
    .regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'a base58 Solana address')
    .optional(),
  PLATFORM_SOLANA_KEY: z.string().min(1).optional(),
  TOLLGATE_SOLANA_SPONSOR_KEY: z.string().min(1).optional(),
  TOLLGATE_SPONSOR_MAX_PER_PAYER_PER_MIN: int(0, 100_000).default(30),
  TOLLGATE_SPONSOR_LOW_LAMPORTS: int(0, 1_000_000_000_000).default(50_000_000),
  PLATFORM_SUI_KEY: z.string().min(1).optional(),
  PLATFORM_FEE_BPS: int(0, 10_000).default(100),
  PLATFORM_FEE_MIN: z.string().default('0.001'),
  TOLLGATE_ALLOW_PRIVATE_ORIGINS: bool.optional(),
  TOLLGATE_REQUIREMENT_TTL_SEC: int(10, 86_400).default(300),
  TOLLGATE_CLOCK_SKEW_SEC: int(0, 600).default(30),
  TOLLGATE_AUTH_CHALLENGE_TTL_SEC: int(10, 3600).default(300),
  TOLLGATE_SESSION_TTL_SEC: int(60, 30 * 86_400).default(86_400),
  TOLLGATE_HEALTH_INTERVAL_MS: int(0, 3_600_000).default(30_000),
  TOLLGATE_LEASE_MS: int(1000, 3_600_000).default(60_000),
  TOLLGATE_PAID_RETRY_AFTER_SEC: int(0, 3600).default(2),
  TOLLGATE_MAX_BODY_BYTES: int(1024, 64 * 1024 * 1024).default(1024 * 1024),
  TOLLGATE_MAX_RESPONSE_BYTES: int(1024, 256 * 1024 * 1024).default(10 * 1024 * 1024),
  TOLLGATE_RESPONSE_RETENTION_HOURS: int(1, 24 * 30).default(24),
  TOLLGATE_MODELS_FILE: z.string().optional(),
  TOLLGATE_RATE_LIMIT_PER_MIN: int(0, 1_000_000).default(0),
  TOLLGATE_HEADERS_TIMEOUT_MS: int(100, 300_000).default(15_000),
  TOLLGATE_REQUEST_TIMEOUT_MS: int(100, 3_600_000).default(30_000),
  TOLLGATE_KEEP_ALIVE_TIMEOUT_MS: int(1000, 600_000).default(72_000),
  TOLLGATE_CORS_ORIGINS: corsOrigins.default('*'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type EnvInput = Record<string, string | undefined>;

/** Every variable the gateway reads (docs/configuration.md documents each one). */
export const CONFIG_VARIABLES: readonly string[] = Object.freeze(Object.keys(envSchema.shape));

export interface Config {
  port: number;
  host: string;
  publicBaseUrl: string;
  databaseUrl: string;
  dataDir: string;
  /** null only in sandbox mode before the sandbox bootstrap fills it in. */
  secret: string | null;
  previousSecret: string | null;
  adminToken: string | null;
  network: 'sandbox' | 'mainnet';
  sandbox: boolean;
  /** Network name written in accept options. */
  chainNetwork: 'localnet' | 'mainnet';
  solanaRpcUrl: string | null;
  suiRpcUrl: string | null;
  solanaCommitment: 'confirmed' | 'finalized';
  platformSuiAddress: string | null;
  platformSolanaAddress: string | null;
  /** The platform wallets' keys (a key file path or the key itself), read only by the payout command. */
  platformSolanaKey: string | null;
  platformSuiKey: string | null;
  /**
   * The x402 v2 fee payer on Solana (a key file path or the key itself); null: no v2 on
   * Solana. Sandbox mode makes and funds one.
   */
  solanaSponsorKey: string | null;
  /** Sponsored transactions per payer per minute (0 = no limit). */
  sponsorMaxPerPayerPerMin: number;
  /** Below this SOL balance (lamports) the sponsor is reported low (a warning, /readyz, metrics). */
  sponsorLowLamports: number;
  feeBps: number;
  /** Minimum platform fee, atomic units. */
  feeMin: bigint;
  allowPrivateOrigins: boolean;
  requirementTtlSec: number;
  clockSkewSec: number;
  authChallengeTtlSec: number;
  sessionTtlSec: number;
  healthIntervalMs: number;
  leaseMs: number;
  /** After a paid attempt's upstream failed, the same proof may try again after this long (the retry budget). */
  paidRetryAfterSec: number;
  maxBodyBytes: number;
  maxResponseBytes: number;
  responseRetentionHours: number;
  modelsFile: string | null;
  /** Requests per minute per client IP; 0 = no limit. */
  rateLimitPerMin: number;
  /** Longest a client may take to send a request's headers (from its first byte, or from connecting). */
  headersTimeoutMs: number;
  /** Longest a client may take to send a whole request (headers and body); never limits the response. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open between requests. */
  keepAliveTimeoutMs: number;
  /** Browser origins allowed to read the public API: '*' (any), a list, or [] (none); never with credentials. */
  corsOrigins: '*' | readonly string[];
  logLevel: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Reads `--config <file>` / `--config=<file>` from argv: a JSON object of variable names to values. */
function readConfigFile(argv: readonly string[]): EnvInput {
  const i = argv.findIndex((a) => a === '--config' || a.startsWith('--config='));
  if (i < 0) return {};
  const arg = argv[i]!;
  const path = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[i + 1];
  if (!path) throw new ConfigError('--config needs a file path');
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ConfigError(`cannot read config file ${path}: ${(e as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${path} must hold a JSON object`);
  }
  return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, v == null ? undefined : String(v)]));
}

/** Parses configuration. Environment variables override the config file. */
export function loadConfig(
  env: EnvInput = process.env,
  argv: readonly string[] = process.argv.slice(2),
): Readonly<Config> {
  const fromFile = readConfigFile(argv);
  const merged: EnvInput = { ...fromFile };
  for (const key of Object.keys(envSchema.shape)) {
    const v = env[key];
    if (v !== undefined && v !== '') merged[key] = v;
  }
  const parsed = envSchema.safeParse(merged);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const sandbox = e.TOLLGATE_NETWORK === 'sandbox';
  let feeMin: bigint;
  try {
    feeMin = parseAmount(e.PLATFORM_FEE_MIN, USDC_DECIMALS);
  } catch {
    throw new ConfigError('invalid configuration:\n  PLATFORM_FEE_MIN: a decimal USDC amount like 0.001');
  }

  const problems: string[] = [];
  if (!sandbox) {
    if (!e.TOLLGATE_SECRET) problems.push('TOLLGATE_SECRET: required outside sandbox mode');
    if (!e.DATABASE_URL) problems.push('DATABASE_URL: required outside sandbox mode');
    if (!e.PUBLIC_BASE_URL) problems.push('PUBLIC_BASE_URL: required outside sandbox mode');
    if (!e.SOLANA_RPC_URL && !e.SUI_RPC_URL)
      problems.push('SOLANA_RPC_URL or SUI_RPC_URL: at least one chain is required');
    if (e.SOLANA_RPC_URL && !e.PLATFORM_SOLANA_ADDRESS)
      problems.push('PLATFORM_SOLANA_ADDRESS: required with SOLANA_RPC_URL');
    if (e.SUI_RPC_URL && !e.PLATFORM_SUI_ADDRESS)
      problems.push('PLATFORM_SUI_ADDRESS: required with SUI_RPC_URL');
  }
  if (e.TOLLGATE_HEADERS_TIMEOUT_MS > e.TOLLGATE_REQUEST_TIMEOUT_MS)
    problems.push('TOLLGATE_HEADERS_TIMEOUT_MS: must not exceed TOLLGATE_REQUEST_TIMEOUT_MS');
  if (problems.length) throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);

  const dataDir = resolve(e.TOLLGATE_DATA_DIR);
  const config: Config = {
    port: e.PORT,
    host: e.HOST,
    publicBaseUrl: (
      e.PUBLIC_BASE_URL ?? `http://${e.HOST.includes(':') ? `[${e.HOST}]` : e.HOST}:${e.PORT}`
    ).replace(/\/+$/, ''),
    databaseUrl: e.DATABASE_URL ?? `sqlite:${resolve(dataDir, 'tollgate.db')}`,
    dataDir,
    secret: e.TOLLGATE_SECRET ?? null,
    previousSecret: e.TOLLGATE_SECRET_PREVIOUS ?? null,
    adminToken: e.TOLLGATE_ADMIN_TOKEN ?? null,
    network: e.TOLLGATE_NETWORK,
    sandbox,
    chainNetwork: sandbox ? 'localnet' : 'mainnet',
    solanaRpcUrl: e.SOLANA_RPC_URL ?? null,
    suiRpcUrl: e.SUI_RPC_URL ?? null,
    solanaCommitment: e.SOLANA_COMMITMENT,
    platformSuiAddress: e.PLATFORM_SUI_ADDRESS ?? null,
    platformSolanaAddress: e.PLATFORM_SOLANA_ADDRESS ?? null,
    platformSolanaKey: e.PLATFORM_SOLANA_KEY ?? null,
    solanaSponsorKey: e.TOLLGATE_SOLANA_SPONSOR_KEY ?? null,
    sponsorMaxPerPayerPerMin: e.TOLLGATE_SPONSOR_MAX_PER_PAYER_PER_MIN,
    sponsorLowLamports: e.TOLLGATE_SPONSOR_LOW_LAMPORTS,
    platformSuiKey: e.PLATFORM_SUI_KEY ?? null,
    feeBps: e.PLATFORM_FEE_BPS,
    feeMin,
    allowPrivateOrigins: e.TOLLGATE_ALLOW_PRIVATE_ORIGINS ?? sandbox,
    requirementTtlSec: e.TOLLGATE_REQUIREMENT_TTL_SEC,
    clockSkewSec: e.TOLLGATE_CLOCK_SKEW_SEC,
    authChallengeTtlSec: e.TOLLGATE_AUTH_CHALLENGE_TTL_SEC,
    sessionTtlSec: e.TOLLGATE_SESSION_TTL_SEC,
    healthIntervalMs: e.TOLLGATE_HEALTH_INTERVAL_MS,
    leaseMs: e.TOLLGATE_LEASE_MS,
    paidRetryAfterSec: e.TOLLGATE_PAID_RETRY_AFTER_SEC,
    maxBodyBytes: e.TOLLGATE_MAX_BODY_BYTES,
    maxResponseBytes: e.TOLLGATE_MAX_RESPONSE_BYTES,
    responseRetentionHours: e.TOLLGATE_RESPONSE_RETENTION_HOURS,
    modelsFile: e.TOLLGATE_MODELS_FILE ?? null,
    rateLimitPerMin: e.TOLLGATE_RATE_LIMIT_PER_MIN,
    headersTimeoutMs: e.TOLLGATE_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.TOLLGATE_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: e.TOLLGATE_KEEP_ALIVE_TIMEOUT_MS,
    corsOrigins: e.TOLLGATE_CORS_ORIGINS,
    logLevel: e.LOG_LEVEL,
  };
  return Object.freeze(config);
}

/** A copy of a config with some values replaced (sandbox bootstrap, tests), frozen again. */
export function withConfig(base: Readonly<Config>, patch: Partial<Config>): Readonly<Config> {
  return Object.freeze({ ...base, ...patch });
}
