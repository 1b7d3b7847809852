/**
 * New keys and key files in the formats the chains' CLIs use:
 * Solana — a JSON array of the 64 keypair bytes (solana-keygen);
 * Sui — one `suiprivkey1…` line (`sui keytool export` format).
 */
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { getBase58Decoder } from '@solana/kit';

export interface SolanaKey {
  /** 64 bytes: secret seed then public key. */
  secretKey: Uint8Array;
  address: string;
}
export interface SuiKey {
  /** Bech32 `suiprivkey1…`. */
  secretKey: string;
  address: string;
}

/** A fresh Solana keypair. */
export function newSolanaKey(): SolanaKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return { secretKey: new Uint8Array([...seed, ...pub]), address: getBase58Decoder().decode(pub) };
}

/** The address of a 64-byte Solana keypair (its public half, base58). */
export function solanaAddressOf(secretKey: Uint8Array): string {
  return getBase58Decoder().decode(secretKey.subarray(32, 64));
}

/** A fresh Sui Ed25519 keypair. */
export function newSuiKey(): SuiKey {
  const kp = Ed25519Keypair.generate();
  return { secretKey: kp.getSecretKey(), address: kp.toSuiAddress() };
}

function writePrivate(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { mode: 0o600, flag: 'wx' });
}

export function saveSolanaKeyFile(path: string, key: SolanaKey): void {
  writePrivate(path, JSON.stringify([...key.secretKey]));
}

export function saveSuiKeyFile(path: string, key: SuiKey): void {
  writePrivate(path, `${key.secretKey}\n`);
}

/** Loads a key file, creating it with a fresh key first if it does not exist. */
export function loadOrCreateSolanaKey(path: string): SolanaKey {
  if (!existsSync(path)) saveSolanaKeyFile(path, newSolanaKey());
  const secretKey = Uint8Array.from(JSON.parse(readFileSync(path, 'utf8')) as number[]);
  return { secretKey, address: solanaAddressOf(secretKey) };
}

export function loadOrCreateSuiKey(path: string): SuiKey {
  if (!existsSync(path)) saveSuiKeyFile(path, newSuiKey());
  const secretKey = readFileSync(path, 'utf8').trim();
  return { secretKey, address: Ed25519Keypair.fromSecretKey(secretKey).toSuiAddress() };
}
