/**
 * Where the CLI keeps access tokens: `$TOLLGATE_CONFIG_DIR/credentials.json`
 * (default `~/.config/tollgate/`), mode 0600 in a 0700 directory, one entry per
 * gateway URL. Written atomically (temp file + rename) so a crash never leaves
 * a half-written file.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface StoredCredential {
  accessToken: string;
  expiresAt: string;
  owner: { chain: 'sui' | 'solana'; address: string };
}

export interface CredentialsFile {
  defaultGateway?: string;
  gateways: Record<string, StoredCredential>;
}

export const DEFAULT_GATEWAY = 'http://127.0.0.1:8402';

export function configDir(env: Record<string, string | undefined>): string {
  if (env['TOLLGATE_CONFIG_DIR']) return env['TOLLGATE_CONFIG_DIR'];
  const base = env['XDG_CONFIG_HOME'] || join(env['HOME'] || homedir(), '.config');
  return join(base, 'tollgate');
}

export function credentialsPath(env: Record<string, string | undefined>): string {
  return join(configDir(env), 'credentials.json');
}

export function readCredentials(env: Record<string, string | undefined>): CredentialsFile {
  const path = credentialsPath(env);
  if (!existsSync(path)) return { gateways: {} };
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as CredentialsFile;
    return { ...parsed, gateways: parsed.gateways ?? {} };
  } catch {
    throw new Error(`cannot read ${path}: not valid JSON (delete it and log in again)`);
  }
}

export function writeCredentials(env: Record<string, string | undefined>, file: CredentialsFile): void {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = credentialsPath(env);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** Normalises a gateway URL so `http://h:1/` and `http://h:1` share credentials. */
export function normalizeGateway(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--gateway must be a URL like ${DEFAULT_GATEWAY}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new Error('--gateway must be http(s)');
  return parsed.href.replace(/\/+$/, '');
}

/** The gateway a command talks to: --gateway, then $TOLLGATE_GATEWAY, then the last one logged in to. */
export function resolveGateway(env: Record<string, string | undefined>, flag: string | undefined): string {
  const chosen = flag ?? env['TOLLGATE_GATEWAY'] ?? readCredentials(env).defaultGateway ?? DEFAULT_GATEWAY;
  return normalizeGateway(chosen);
}
