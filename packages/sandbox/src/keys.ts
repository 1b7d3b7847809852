/**
 * Key files for sandbox wallets, in the formats the chains' CLIs use:
 * Solana — a JSON array of the 64 keypair bytes; Sui — one `suiprivkey1…` line.
 */
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { getBase58Decoder } from '@solana/kit';

export interface SolanaKey {
  secretKey: Uint8Array;
  address: string;
}
export interface SuiKey {
  secretKey: string;
  address: string;
}

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { mode: 0o600 });
}

export function newSolanaKey(): SolanaKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const secretKey = new Uint8Array([...seed, ...pub]);
  return { secretKey, address: getBase58Decoder().decode(pub) };
}

export function loadOrCreateSolanaKey(path: string): SolanaKey {
  if (existsSync(path)) {
    const bytes = Uint8Array.from(JSON.parse(readFileSync(path, 'utf8')) as number[]);
    return { secretKey: bytes, address: getBase58Decoder().decode(bytes.subarray(32)) };
  }
  const key = newSolanaKey();
  write(path, JSON.stringify([...key.secretKey]));
  return key;
}

export function newSuiKey(): SuiKey {
  const kp = Ed25519Keypair.generate();
  return { secretKey: kp.getSecretKey(), address: kp.toSuiAddress() };
}

export function loadOrCreateSuiKey(path: string): SuiKey {
  if (existsSync(path)) {
    const secretKey = readFileSync(path, 'utf8').trim();
    return { secretKey, address: Ed25519Keypair.fromSecretKey(secretKey).toSuiAddress() };
  }
  const key = newSuiKey();
  write(path, `${key.secretKey}\n`);
  return key;
}
