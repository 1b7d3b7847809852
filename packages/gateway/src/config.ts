/**
 * Configuration: environment variables (and an optional `--config` JSON file with
 * the same names) parsed once into a frozen Config. Nothing else reads process.env.
 * Invalid values fail at boot with one message naming every problem, one line each.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseAmount, USDC_DECIMALS } from '@tollgate/protocol';
import { z } from 'zod';
import {
  checkBaseUrl,
  checkDatabaseUrl,
  checkHost,
  checkReadableFile,
  checkRpcUrl,
  checkSolanaKey,
  checkSqliteFile,
  checkWritableDir,
  safeUrl,
  sqliteFile,
} from './config-checks.ts';

// Messages are what was expected, as a noun phrase: a problem reads "NAME: expected <message>".
const bool = z
  .enum(['0', '1', 'true', 'false'], { error: '1, 0, true or false' })
  .transform((v) => v === '1' || v === 'true');
const int = (min: number, max: number, what = 'an integer') => {
  const msg = `${what} from ${min} to ${max}`;
  return z
    .string()
    .trim()
    .regex(/^-?\d+$/, msg)
    .transform(Number)
    .pipe(z.number().int(msg).min(min, msg).max(max, msg));
};
const url = (what: string) => z.url({ error: what });
const minChars = (n: number, what: string) =>
  z.string({ error: what }).min(n, `${what} of at least ${n} characters`);

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
  PORT: int(0, 65535, 'a port number').default(8402),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_BASE_URL: url('an http(s) URL such as https://pay.example.com').optional(),
  DATABASE_URL: z.string().min(1).optional(),
  TOLLGATE_DATA_DIR: z.string().min(1).default('./data'),
  TOLLGATE_SECRET: minChars(32, 'a random string').optional(),
  TOLLGATE_SECRET_PREVIOUS: minChars(32, 'the previous secret').optional(),
  TOLLGATE_ADMIN_TOKEN: minChars(24, 'a random token').optional(),
  TOLLGATE_NETWORK: z.enum(['sandbox', 'mainnet'], { error: 'sandbox or mainnet' }).default('sandbox'),
  SOLANA_RPC_URL: url('an http(s) URL of a Solana JSON-RPC node').optional(),
  SUI_RPC_URL: url('an http(s) URL of a Sui gRPC node').optional(),
  SOLANA_COMMITMENT: z
    .enum(['confirmed', 'finalized'], { error: 'confirmed or finalized' })
    .default('confirmed'),
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
  TOLLGATE_SPONSOR_LOW_LAMPORTS: int(0, 1_000_000_000_000, 'lamports').default(50_000_000),
  PLATFORM_SUI_KEY: z.string().min(1).optional(),
  PLATFORM_FEE_BPS: int(0, 10_000, 'basis points').default(100),
  PLATFORM_FEE_MIN: z.string().default('0.001'),
  TOLLGATE_ALLOW_PRIVATE_ORIGINS: bool.optional(),
  TOLLGATE_REQUIREMENT_TTL_SEC: int(10, 86_400, 'seconds').default(300),
  TOLLGATE_CLOCK_SKEW_SEC: int(0, 600, 'seconds').default(30),
  TOLLGATE_AUTH_CHALLENGE_TTL_SEC: int(10, 3600, 'seconds').default(300),
  TOLLGATE_SESSION_TTL_SEC: int(60, 30 * 86_400, 'seconds').default(86_400),
  TOLLGATE_HEALTH_INTERVAL_MS: int(0, 3_600_000, 'milliseconds').default(30_000),
  TOLLGATE_LEASE_MS: int(1000, 3_600_000, 'milliseconds').default(60_000),
  TOLLGATE_PAID_RETRY_AFTER_SEC: int(0, 3600, 'seconds').default(2),
  TOLLGATE_UNDELIVERED_AFTER_SEC: int(1, 30 * 86_400, 'seconds').default(3600),
  TOLLGATE_MAX_BODY_BYTES: int(1024, 64 * 1024 * 1024, 'bytes').default(1024 * 1024),
  TOLLGATE_MAX_RESPONSE_BYTES: int(1024, 256 * 1024 * 1024, 'bytes').default(10 * 1024 * 1024),
  TOLLGATE_RESPONSE_RETENTION_HOURS: int(1, 24 * 30, 'hours').default(24),
  TOLLGATE_MODELS_FILE: z.string().optional(),
  TOLLGATE_RATE_LIMIT_PER_MIN: int(0, 1_000_000).default(0),
  TOLLGATE_HEADERS_TIMEOUT_MS: int(100, 300_000, 'milliseconds').default(15_000),
  TOLLGATE_REQUEST_TIMEOUT_MS: int(100, 3_600_000, 'milliseconds').default(30_000),
  TOLLGATE_KEEP_ALIVE_TIMEOUT_MS: int(1000, 600_000, 'milliseconds').default(72_000),
  TOLLGATE_CORS_ORIGINS: corsOrigins.default('*'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'fatal, error, warn, info, debug, trace or silent',
    })
    .default('info'),
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
  /** A paid request still undelivered this long after its payment counts as undelivered (refundable). */
  undeliveredAfterSec: number;
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

/** Values never echoed in a message and redacted by `config check`. */
export const SECRET_VARIABLES: ReadonlySet<string> = new Set([
  'TOLLGATE_SECRET',
  'TOLLGATE_SECRET_PREVIOUS',
  'TOLLGATE_ADMIN_TOKEN',
  'PLATFORM_SOLANA_KEY',
  'PLATFORM_SUI_KEY',
  'TOLLGATE_SOLANA_SPONSOR_KEY',
]);
/** URLs that may carry credentials or API keys: shown only through safeUrl. */
const URL_VARIABLES: ReadonlySet<string> = new Set([
  'PUBLIC_BASE_URL',
  'DATABASE_URL',
  'SOLANA_RPC_URL',
  'SUI_RPC_URL',
]);

/** Invalid configuration: every problem found, one line each ("NAME: expected …"). */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: readonly string[];
  constructor(problems: string | readonly string[]) {
    const list = typeof problems === 'string' ? [problems] : [...problems];
    super(`invalid configuration:\n  ${list.join('\n  ')}`);
    this.problems = Object.freeze(list);
  }
}

/** Where a setting came from. */
export type ConfigSource = 'env' | 'file' | 'default';

export interface ConfigSetting {
  name: string;
  /** The effective value for display: secrets and URLs already made safe; null = unset. */
  value: string | null;
  source: ConfigSource;
}

/** Reads `--config <file>` / `--config=<file>` from argv: a JSON object of variable names to values. */
function readConfigFile(argv: readonly string[]): { values: EnvInput; problem: string | null } {
  const i = argv.findIndex((a) => a === '--config' || a.startsWith('--config='));
  if (i < 0) return { values: {}, problem: null };
  const arg = argv[i]!;
  const path = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[i + 1];
  const fail = (problem: string) => ({ values: {}, problem: `--config: ${problem}` });
  if (!path) return fail('needs a file path');
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    return fail(`cannot read config file ${path}: ${(e as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return fail(`config file ${path} must hold a JSON object`);
  }
  const values = Object.fromEntries(
    Object.entries(parsed).map(([k, v]) => [k, v == null ? undefined : String(v)]),
  );
  // A misspelt name would otherwise be ignored without a word.
  const unknown = Object.keys(values).filter((k) => !CONFIG_VARIABLES.includes(k));
  if (unknown.length)
    return fail(`${path} names unknown variables: ${unknown.join(', ')} (docs/configuration.md lists them)`);
  return { values, problem: null };
}

/** `, got "…"` for a message, never for a secret, URLs made safe first. */
function got(name: string, raw: string | undefined): string {
  if (raw === undefined || SECRET_VARIABLES.has(name)) return '';
  const shown = URL_VARIABLES.has(name) ? safeUrl(raw) : raw;
  if (shown === null) return '';
  return `, got "${shown.length > 80 ? `${shown.slice(0, 77)}...` : shown}"`;
}

/** Parses configuration. Environment variables override the config file. */
export function loadConfig(
  env: EnvInput = process.env,
  argv: readonly string[] = process.argv.slice(2),
): Readonly<Config> {
  return inspectConfig(env, argv).config;
}

/**
 * loadConfig, plus where each setting came from and its value fit for display
 * (`config check`). Throws one ConfigError naming every problem found.
 */
export function inspectConfig(
  env: EnvInput = process.env,
  argv: readonly string[] = process.argv.slice(2),
): { config: Readonly<Config>; settings: ConfigSetting[] } {
  const problems: string[] = [];
  const file = readConfigFile(argv);
  if (file.problem) problems.push(file.problem);
  const merged: EnvInput = { ...file.values };
  const sources: Record<string, ConfigSource> = {};
  for (const key of Object.keys(file.values)) sources[key] = 'file';
  for (const key of CONFIG_VARIABLES) {
    const v = env[key];
    if (v !== undefined && v !== '') {
      merged[key] = v;
      sources[key] = 'env';
    }
  }

  // Every schema problem, one line per variable, then the checks a schema cannot make,
  // on the raw values of variables that passed it: all problems are reported at once.
  const parsed = envSchema.safeParse(merged);
  const bad = new Set<string>();
  const problem = (name: string, line: string) => {
    if (bad.has(name)) return;
    bad.add(name);
    problems.push(line);
  };
  for (const issue of parsed.success ? [] : parsed.error.issues) {
    const name = String(issue.path[0] ?? 'configuration');
    problem(name, `${name}: expected ${issue.message}${got(name, merged[name])}`);
  }
  const check = (name: string, result: string | null, echo = true) => {
    if (result !== null) problem(name, `${name}: expected ${result}${echo ? got(name, merged[name]) : ''}`);
  };
  const raw = (name: string) => (bad.has(name) ? undefined : merged[name]);

  const network = raw('TOLLGATE_NETWORK') ?? (bad.has('TOLLGATE_NETWORK') ? null : 'sandbox');
  const sandbox = network === 'sandbox';
  check('HOST', checkHost(raw('HOST') ?? '127.0.0.1'));
  const base = raw('PUBLIC_BASE_URL');
  if (base !== undefined) check('PUBLIC_BASE_URL', checkBaseUrl(base));
  for (const name of ['SOLANA_RPC_URL', 'SUI_RPC_URL']) {
    const v = raw(name);
    if (v !== undefined) check(name, checkRpcUrl(v));
  }
  const databaseUrl = raw('DATABASE_URL');
  if (databaseUrl !== undefined) {
    check('DATABASE_URL', checkDatabaseUrl(databaseUrl), false);
    const sqlite = bad.has('DATABASE_URL') ? null : sqliteFile(databaseUrl);
    if (sqlite) check('DATABASE_URL', checkSqliteFile(sqlite), false);
  }
  const dataDir = raw('TOLLGATE_DATA_DIR') ?? './data';
  // Sandbox mode writes its keys there; elsewhere only the default database lives there.
  if (sandbox || (databaseUrl === undefined && !bad.has('DATABASE_URL')))
    check('TOLLGATE_DATA_DIR', checkWritableDir(dataDir), false);
  const feeMin = raw('PLATFORM_FEE_MIN');
  if (feeMin !== undefined) {
    try {
      parseAmount(feeMin, USDC_DECIMALS);
    } catch {
      check('PLATFORM_FEE_MIN', 'a decimal USDC amount like 0.001 (at most 6 decimals)');
    }
  }
  const sponsorKey = raw('TOLLGATE_SOLANA_SPONSOR_KEY');
  if (sponsorKey !== undefined) check('TOLLGATE_SOLANA_SPONSOR_KEY', checkSolanaKey(sponsorKey), false);
  const modelsFile = raw('TOLLGATE_MODELS_FILE');
  if (modelsFile !== undefined) check('TOLLGATE_MODELS_FILE', checkReadableFile(modelsFile), false);

  if (network === 'mainnet') {
    const need = (name: string, what: string) => {
      if (merged[name] === undefined) problem(name, `${name}: required outside sandbox mode: ${what}`);
    };
    need('TOLLGATE_SECRET', 'a random string of at least 32 characters');
    need('DATABASE_URL', 'postgres://user:password@host:5432/database or sqlite:<path>');
    need('PUBLIC_BASE_URL', 'the public https URL of this gateway');
    if (merged['SOLANA_RPC_URL'] === undefined && merged['SUI_RPC_URL'] === undefined)
      problem('SOLANA_RPC_URL', 'SOLANA_RPC_URL or SUI_RPC_URL: at least one chain is required');
    if (merged['SOLANA_RPC_URL'] !== undefined)
      need('PLATFORM_SOLANA_ADDRESS', 'required with SOLANA_RPC_URL (the platform fee recipient)');
    if (merged['SUI_RPC_URL'] !== undefined)
      need('PLATFORM_SUI_ADDRESS', 'required with SUI_RPC_URL (the platform fee recipient)');
  }
  if (parsed.success && parsed.data.TOLLGATE_HEADERS_TIMEOUT_MS > parsed.data.TOLLGATE_REQUEST_TIMEOUT_MS)
    problem(
      'TOLLGATE_HEADERS_TIMEOUT_MS',
      'TOLLGATE_HEADERS_TIMEOUT_MS: must not exceed TOLLGATE_REQUEST_TIMEOUT_MS',
    );
  if (problems.length || !parsed.success) throw new ConfigError(problems);

  const e = parsed.data;
  const resolvedDataDir = resolve(e.TOLLGATE_DATA_DIR);
  const config: Config = {
    port: e.PORT,
    host: e.HOST,
    publicBaseUrl: (
      e.PUBLIC_BASE_URL ?? `http://${e.HOST.includes(':') ? `[${e.HOST}]` : e.HOST}:${e.PORT}`
    ).replace(/\/+$/, ''),
    databaseUrl: e.DATABASE_URL ?? `sqlite:${resolve(resolvedDataDir, 'tollgate.db')}`,
    dataDir: resolvedDataDir,
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
    feeMin: parseAmount(e.PLATFORM_FEE_MIN, USDC_DECIMALS),
    allowPrivateOrigins: e.TOLLGATE_ALLOW_PRIVATE_ORIGINS ?? sandbox,
    requirementTtlSec: e.TOLLGATE_REQUIREMENT_TTL_SEC,
    clockSkewSec: e.TOLLGATE_CLOCK_SKEW_SEC,
    authChallengeTtlSec: e.TOLLGATE_AUTH_CHALLENGE_TTL_SEC,
    sessionTtlSec: e.TOLLGATE_SESSION_TTL_SEC,
    healthIntervalMs: e.TOLLGATE_HEALTH_INTERVAL_MS,
    leaseMs: e.TOLLGATE_LEASE_MS,
    paidRetryAfterSec: e.TOLLGATE_PAID_RETRY_AFTER_SEC,
    undeliveredAfterSec: e.TOLLGATE_UNDELIVERED_AFTER_SEC,
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
  Object.freeze(config);

  // Derived defaults are shown as the value they took.
  const derived: Record<string, unknown> = {
    PUBLIC_BASE_URL: config.publicBaseUrl,
    DATABASE_URL: config.databaseUrl,
    TOLLGATE_DATA_DIR: config.dataDir,
    TOLLGATE_ALLOW_PRIVATE_ORIGINS: config.allowPrivateOrigins,
  };
  const settings = CONFIG_VARIABLES.map((name): ConfigSetting => {
    const value = derived[name] ?? (e as Record<string, unknown>)[name];
    let shown: string | null = value === undefined || value === null ? null : String(value);
    if (shown !== null && SECRET_VARIABLES.has(name)) shown = '[redacted]';
    else if (shown !== null && URL_VARIABLES.has(name)) shown = safeUrl(shown) ?? '[redacted]';
    return { name, value: shown, source: sources[name] ?? 'default' };
  });
  return { config, settings };
}

/** A copy of a config with some values replaced (sandbox bootstrap, tests), frozen again. */
export function withConfig(base: Readonly<Config>, patch: Partial<Config>): Readonly<Config> {
  return Object.freeze({ ...base, ...patch });
}
