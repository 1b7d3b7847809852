/**
 * The platform wallets' keys for the payout command, in the formats the chains' CLIs
 * use (as the client's key files do): Solana, a JSON array of the 64 keypair bytes
 * (solana-keygen) or their base58; Sui, a `suiprivkey1…` key or a `sui.keystore`.
 * PLATFORM_*_KEY holds a file path or the key itself; in sandbox mode the sandbox
 * wallets in `<data dir>/sandbox/` are used. The key must derive the address the
 * gateway names as the platform's, or nothing is paid.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Keypair } from '@mysten/sui/cryptography';
import { decodeSuiPrivateKey } from '@mysten/sui/cryptography';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { Secp256k1Keypair } from '@mysten/sui/keypairs/secp256k1';
import { Secp256r1Keypair } from '@mysten/sui/keypairs/secp256r1';
import { fromBase64, normalizeSuiAddress } from '@mysten/sui/utils';
import { createKeyPairSignerFromBytes, getBase58Decoder } from '@solana/kit';
import type { Config } from '../config.ts';
import { parseSolanaKeypair } from '../crypto/solana-keypair.ts';
import type { Chain } from '../store/store.ts';

/** A refusal to pay with the given key material; the message names the variable to fix. */
export class PlatformKeyError extends Error {
  override readonly name = 'PlatformKeyError';
}

export interface SolanaPlatformKey {
  chain: 'solana';
  address: string;
  /** 64 bytes: seed then public key. */
  secretKey: Uint8Array;
}

export interface SuiPlatformKey {
  chain: 'sui';
  address: string;
  keypair: Keypair;
}

export type PlatformKey = SolanaPlatformKey | SuiPlatformKey;

type KeyConfig = Pick<
  Config,
  | 'sandbox'
  | 'dataDir'
  | 'platformSolanaKey'
  | 'platformSuiKey'
  | 'platformSolanaAddress'
  | 'platformSuiAddress'
>;

const VARS = {
  solana: { key: 'PLATFORM_SOLANA_KEY', address: 'PLATFORM_SOLANA_ADDRESS', file: 'platform-solana.json' },
  sui: { key: 'PLATFORM_SUI_KEY', address: 'PLATFORM_SUI_ADDRESS', file: 'platform-sui.key' },
} as const;

/** The sandbox wallet file sandbox mode creates for the platform on this chain. */
export function sandboxKeyPath(dataDir: string, chain: Chain): string {
  return join(dataDir, 'sandbox', VARS[chain].file);
}

/** A Solana keypair from its text: a JSON array of 64 numbers (solana-keygen) or their base58. */
export function parseSolana(text: string, what: string): Uint8Array {
  const bytes = parseSolanaKeypair(text);
  if (!bytes) {
    throw new PlatformKeyError(
      `${what} is not a Solana keypair: expected a JSON array of 64 numbers (solana-keygen) or their base58`,
    );
  }
  return bytes;
}

function suiKeypair(scheme: string, secret: Uint8Array, what: string): Keypair {
  switch (scheme) {
    case 'ED25519':
      return Ed25519Keypair.fromSecretKey(secret);
    case 'Secp256k1':
      return Secp256k1Keypair.fromSecretKey(secret);
    case 'Secp256r1':
      return Secp256r1Keypair.fromSecretKey(secret);
    default:
      throw new PlatformKeyError(`${what}: unsupported Sui key scheme ${scheme}`);
  }
}

const KEYSTORE_FLAGS: Record<number, string> = { 0: 'ED25519', 1: 'Secp256k1', 2: 'Secp256r1' };

function parseSui(text: string, what: string): Keypair[] {
  const t = text.trim();
  if (t.startsWith('suiprivkey')) {
    try {
      const { scheme, secretKey } = decodeSuiPrivateKey(t);
      return [suiKeypair(scheme, secretKey, what)];
    } catch (e) {
      if (e instanceof PlatformKeyError) throw e;
      throw new PlatformKeyError(`${what} is not a valid suiprivkey… key`);
    }
  }
  let entries: unknown;
  try {
    entries = JSON.parse(t);
  } catch {
    throw new PlatformKeyError(`${what} is not a Sui key: expected a suiprivkey1… key or a sui.keystore`);
  }
  if (!Array.isArray(entries) || !entries.every((e) => typeof e === 'string') || entries.length === 0) {
    throw new PlatformKeyError(`${what} is not a sui.keystore: expected a JSON array of strings`);
  }
  return (entries as string[]).map((entry) => {
    if (entry.startsWith('suiprivkey')) return parseSui(entry, what)[0]!;
    let raw: Uint8Array;
    try {
      raw = fromBase64(entry);
    } catch {
      throw new PlatformKeyError(`${what}: a sui.keystore entry is not base64`);
    }
    const scheme = KEYSTORE_FLAGS[raw[0] ?? -1];
    if (!scheme || raw.length !== 33)
      throw new PlatformKeyError(`${what}: a sui.keystore entry is not flag‖32 bytes`);
    return suiKeypair(scheme, raw.subarray(1), what);
  });
}

/** The configured key material: the variable's value, a file it names, or the sandbox wallet. */
function source(config: KeyConfig, chain: Chain): { text: string; what: string } {
  const v = VARS[chain];
  const given = chain === 'solana' ? config.platformSolanaKey : config.platformSuiKey;
  const path = given ?? (config.sandbox ? sandboxKeyPath(config.dataDir, chain) : null);
  if (path === null) {
    throw new PlatformKeyError(
      `${v.key} is not set: give the platform wallet's key file path (or the key itself) to pay out on ${chain}`,
    );
  }
  if (existsSync(path)) {
    try {
      return {
        text: readFileSync(path, 'utf8'),
        what: `${given ? v.key : 'the sandbox platform key'} (${path})`,
      };
    } catch (e) {
      throw new PlatformKeyError(
        `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
  }
  if (given === null) {
    throw new PlatformKeyError(
      `no sandbox platform key at ${path}: start the gateway in sandbox mode with this data directory first, or set ${v.key}`,
    );
  }
  // Not a file: the key itself. A path that does not exist must not be echoed as a key, nor a key as a path.
  if (
    /[/\\]/.test(given) ||
    given.endsWith('.json') ||
    given.endsWith('.key') ||
    given.endsWith('.keystore')
  ) {
    throw new PlatformKeyError(`${v.key}: no such key file`);
  }
  return { text: given, what: v.key };
}

/** The address the gateway pays the platform's share to on this chain (what the key must derive). */
function expectedAddress(config: KeyConfig, chain: Chain): string | null {
  if (config.sandbox) {
    // Sandbox mode always names its own wallet as the platform (sandbox-mode.ts), whatever the variables say.
    const path = sandboxKeyPath(config.dataDir, chain);
    if (!existsSync(path)) return null;
    const text = readFileSync(path, 'utf8');
    return chain === 'solana'
      ? getBase58Decoder().decode(parseSolana(text, path).subarray(32))
      : parseSui(text, path)[0]!.toSuiAddress();
  }
  return chain === 'solana' ? config.platformSolanaAddress : config.platformSuiAddress;
}

/**
 * Loads the platform key of a chain and checks it against the platform address. Throws
 * PlatformKeyError with a message fit for the operator (never the key itself).
 */
export async function loadPlatformKey(config: KeyConfig, chain: Chain): Promise<PlatformKey> {
  const v = VARS[chain];
  const { text, what } = source(config, chain);
  const expected = expectedAddress(config, chain);
  if (expected === null) {
    throw new PlatformKeyError(
      `${v.address} is not set: the payout command pays only from the platform's wallet`,
    );
  }
  if (chain === 'solana') {
    const secretKey = parseSolana(text, what);
    try {
      // Also proves the two halves belong together.
      await createKeyPairSignerFromBytes(secretKey);
    } catch {
      throw new PlatformKeyError(`${what}: its public half does not match its secret half`);
    }
    const address = getBase58Decoder().decode(secretKey.subarray(32));
    if (address !== expected) {
      throw new PlatformKeyError(
        `${what} holds ${address}, but the platform address (${v.address}) is ${expected}: refusing to pay out from another wallet`,
      );
    }
    return { chain, address, secretKey };
  }
  const wanted = normalizeSuiAddress(expected);
  const keys = parseSui(text, what);
  const keypair = keys.find((k) => k.toSuiAddress() === wanted);
  if (!keypair) {
    const held = keys.map((k) => k.toSuiAddress()).join(', ');
    throw new PlatformKeyError(
      `${what} holds ${held}, but the platform address (${v.address}) is ${wanted}: refusing to pay out from another wallet`,
    );
  }
  return { chain, address: wanted, keypair };
}
