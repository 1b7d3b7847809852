/**
 * Sui key material in the forms the Sui CLI uses: a `suiprivkey1…` bech32 string, or the
 * keystore file (`~/.sui/sui_config/sui.keystore`, a JSON array of base64 strings, each a
 * scheme flag byte followed by the 32-byte secret key). Only Ed25519 keys are supported.
 */
import { readFileSync } from 'node:fs';
import type { Signer } from '@mysten/sui/cryptography';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { fromBase64, normalizeSuiAddress } from '@mysten/sui/utils';

const ED25519_FLAG = 0x00;

/** `suiprivkey1…`, 32 raw secret-key bytes, or a ready signer (e.g. an Ed25519Keypair). */
export type SuiSecretKey = string | Uint8Array | Signer;

export function suiSignerFrom(key: SuiSecretKey): Signer {
  if (typeof key === 'string') {
    const text = key.trim();
    if (!text.startsWith('suiprivkey1'))
      throw new Error('a Sui secret key string must be a suiprivkey1… key');
    return Ed25519Keypair.fromSecretKey(text);
  }
  if (key instanceof Uint8Array) return Ed25519Keypair.fromSecretKey(Uint8Array.from(key));
  if (key && typeof key.signTransaction === 'function' && typeof key.toSuiAddress === 'function') return key;
  throw new Error('secretKey must be a suiprivkey1… string, 32 bytes, or a Sui signer');
}

/**
 * Parses a Sui CLI keystore (JSON array of base64 `flag ‖ key`) or a file holding one
 * `suiprivkey1…` key. With several keys, `address` picks one; otherwise the first is used.
 */
export function parseSuiKeyFile(text: string, opts: { address?: string } = {}): Ed25519Keypair {
  const trimmed = text.trim();
  if (trimmed.startsWith('suiprivkey1')) return pick([Ed25519Keypair.fromSecretKey(trimmed)], opts.address);
  let entries: unknown;
  try {
    entries = JSON.parse(trimmed);
  } catch {
    throw new Error('not a Sui key file: expected a suiprivkey1… key or a keystore JSON array');
  }
  if (typeof entries === 'string' && entries.startsWith('suiprivkey1')) {
    return pick([Ed25519Keypair.fromSecretKey(entries)], opts.address);
  }
  if (!Array.isArray(entries) || entries.length === 0 || !entries.every((e) => typeof e === 'string')) {
    throw new Error('not a Sui keystore: expected a non-empty JSON array of base64 strings');
  }
  const keys: Ed25519Keypair[] = [];
  for (const entry of entries as string[]) {
    let bytes: Uint8Array;
    try {
      bytes = fromBase64(entry);
    } catch {
      throw new Error('not a Sui keystore: an entry is not base64');
    }
    if (bytes.length !== 33) throw new Error('not a Sui keystore: an entry is not flag + 32 bytes');
    // Other schemes are skipped when an address is asked for, refused when they are all there is.
    if (bytes[0] === ED25519_FLAG) keys.push(Ed25519Keypair.fromSecretKey(bytes.subarray(1)));
  }
  if (keys.length === 0) throw new Error('the keystore holds no Ed25519 key (only Ed25519 is supported)');
  return pick(keys, opts.address);
}

function pick(keys: Ed25519Keypair[], address: string | undefined): Ed25519Keypair {
  if (address === undefined) return keys[0]!;
  const wanted = normalizeSuiAddress(address);
  const key = keys.find((k) => k.toSuiAddress() === wanted);
  if (!key) throw new Error(`no Ed25519 key for ${wanted} in the key file`);
  return key;
}

/**
 * @example
 * const wallet = suiWallet({ secretKey: loadSuiKeyFile(`${homedir()}/.sui/sui_config/sui.keystore`), rpcUrl });
 */
export function loadSuiKeyFile(path: string, opts: { address?: string } = {}): Ed25519Keypair {
  return parseSuiKeyFile(readFileSync(path, 'utf8'), opts);
}
