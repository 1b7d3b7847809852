/**
 * `npm run config:check` (`tollgate-gateway [--config file] config check [--json]`):
 * validates the configuration exactly as a start would, without starting anything, and
 * prints every effective setting with where it came from. Secrets are never printed.
 * Exit 0 when valid, 78 (EX_CONFIG) with every problem listed otherwise.
 */
import { join } from 'node:path';
import { ConfigError, type EnvInput, inspectConfig } from '../config.ts';
import { EXIT, explainStartupError } from './problems.ts';

export interface CheckIo {
  out(text: string): void;
  err(text: string): void;
}

/** What sandbox mode puts in place of a setting left unset. */
function sandboxFills(dataDir: string): Record<string, string> {
  const wallet = (file: string) => `sandbox wallet ${join(dataDir, 'sandbox', file)}`;
  return {
    TOLLGATE_SECRET: `generated at first start, kept in ${join(dataDir, 'secret')}`,
    TOLLGATE_ADMIN_TOKEN: `generated at first start, kept in ${join(dataDir, 'admin-token')}`,
    SOLANA_RPC_URL: 'a local Solana chain started in-process',
    SUI_RPC_URL: 'a local Sui chain started in-process',
    PLATFORM_SOLANA_ADDRESS: wallet('platform-solana.json'),
    PLATFORM_SUI_ADDRESS: wallet('platform-sui.key'),
    PLATFORM_SOLANA_KEY: wallet('platform-solana.json'),
    PLATFORM_SUI_KEY: wallet('platform-sui.key'),
    TOLLGATE_SOLANA_SPONSOR_KEY: `${wallet('sponsor-solana.json')}, funded with sandbox SOL`,
  };
}

/** Sandbox mode replaces these even when set: its own chains and wallets. */
const SANDBOX_OVERRIDES = new Set([
  'SOLANA_RPC_URL',
  'SUI_RPC_URL',
  'PLATFORM_SOLANA_ADDRESS',
  'PLATFORM_SUI_ADDRESS',
]);

export function configCheck(env: EnvInput, argv: readonly string[], io: CheckIo): number {
  let inspected: ReturnType<typeof inspectConfig>;
  try {
    inspected = inspectConfig(env, argv);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    io.err(`${explainStartupError(e)?.text ?? e.message}\n`);
    return EXIT.config;
  }
  const { config, settings } = inspected;
  const fills = config.sandbox ? sandboxFills(config.dataDir) : {};
  const rows = settings.map((s) => {
    const fill = fills[s.name];
    if (fill && (s.value === null || SANDBOX_OVERRIDES.has(s.name))) {
      const ignored = s.value === null ? '' : '; the value set is ignored in sandbox mode';
      return { ...s, value: `(${fill}${ignored})`, source: 'sandbox' };
    }
    return s;
  });
  const mode = config.sandbox ? 'sandbox' : 'production';
  if (argv.includes('--json')) {
    io.out(`${JSON.stringify({ ok: true, mode, settings: rows }, null, 2)}\n`);
    return EXIT.ok;
  }
  const width = Math.max(...rows.map((r) => r.name.length));
  const lines = rows.map(
    (r) =>
      `  ${r.name.padEnd(width)}  ${r.value ?? '(unset)'}${r.source === 'default' ? '' : `  [${r.source}]`}`,
  );
  io.out(
    [
      `tollgate: configuration OK: ${mode} mode (${config.network}). Effective settings, secrets redacted:`,
      ...lines,
      '',
    ].join('\n'),
  );
  return EXIT.ok;
}
