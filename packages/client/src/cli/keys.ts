/**
 * Loads a wallet key file and signs the gateway's sign-in message with it.
 * Solana: the Solana CLI key file (JSON array of the 64 keypair bytes).
 * Sui: a `suiprivkey1…` line, or a `sui.keystore` (JSON array of base64
 * flag||secret entries; pick one with --address when it holds several).
 */
import { readFileSync } from 'node:fs';
import type { Keypair } from '@mysten/sui/cryptography';
import { decodeSuiPrivateKey } from '@mysten/sui/cryptography';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { Secp256k1Keypair } from '@mysten/sui/keypairs/secp256k1';
import { Secp256r1Keypair } from '@mysten/sui/keypairs/secp256r1';
import { createKeyPairFromBytes, getAddressFromPublicKey, getBase58Decoder, signBytes } from '@solana/kit';
import type { MessageSigner } from '../wallets/wallet.ts';
import { CliError } from './command.ts';

/** A key file's key, as `signIn` takes it: signs the exact UTF-8 bytes of a message. */
export type SignInKey = MessageSigner;

async function solanaKey(text: string): Promise<SignInKey> {
  let bytes: Uint8Array;
  try {
    const value = JSON.parse(text) as unknown;
    if (
      !Array.isArray(value) ||
      value.length !== 64 ||
      !value.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)
    ) {
      throw new Error();
    }
    bytes = Uint8Array.from(value as number[]);
  } catch {
    throw new CliError('not a Solana key file: expected a JSON array of 64 numbers (solana-keygen format)');
  }
  let pair: Awaited<ReturnType<typeof createKeyPairFromBytes>>;
  try {
    pair = await createKeyPairFromBytes(bytes);
  } catch {
    throw new CliError('the Solana key file is inconsistent: its public half does not match its secret half');
  }
  const address = await getAddressFromPublicKey(pair.publicKey);
  return {
    chain: 'solana',
    address,
    async signMessage(message) {
      const signature = await signBytes(pair.privateKey, new TextEncoder().encode(message));
      return getBase58Decoder().decode(signature);
    },
  };
}

function suiKeypair(scheme: string, secret: Uint8Array): Keypair {
  switch (scheme) {
    case 'ED25519':
      return Ed25519Keypair.fromSecretKey(secret);
    case 'Secp256k1':
      return Secp256k1Keypair.fromSecretKey(secret);
    case 'Secp256r1':
      return Secp256r1Keypair.fromSecretKey(secret);
    default:
      throw new CliError(`unsupported Sui key scheme ${scheme}`);
  }
}

const KEYSTORE_FLAGS: Record<number, string> = { 0: 'ED25519', 1: 'Secp256k1', 2: 'Secp256r1' };

function suiKeypairs(text: string): Keypair[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('suiprivkey')) {
    try {
      const { scheme, secretKey } = decodeSuiPrivateKey(trimmed);
      return [suiKeypair(scheme, secretKey)];
    } catch (e) {
      if (e instanceof CliError) throw e;
      throw new CliError('not a valid suiprivkey… key');
    }
  }
  let entries: unknown;
  try {
    entries = JSON.parse(trimmed);
  } catch {
    throw new CliError('not a Sui key file: expected a suiprivkey1… line or a sui.keystore JSON array');
  }
  if (!Array.isArray(entries) || !entries.every((e) => typeof e === 'string')) {
    throw new CliError('not a Sui keystore: expected a JSON array of strings');
  }
  return entries.map((entry: string) => {
    if (entry.startsWith('suiprivkey')) return suiKeypairs(entry)[0]!;
    const raw = Buffer.from(entry, 'base64');
    const scheme = KEYSTORE_FLAGS[raw[0] ?? -1];
    if (!scheme || raw.length !== 33) throw new CliError('a sui.keystore entry is not flag||32-byte secret');
    return suiKeypair(scheme, raw.subarray(1));
  });
}

function suiKey(text: string, address: string | undefined): SignInKey {
  const pairs = suiKeypairs(text);
  const wanted = address?.toLowerCase();
  const chosen = wanted ? pairs.filter((k) => k.toSuiAddress() === wanted) : pairs;
  if (chosen.length === 0) throw new CliError(`no key for ${address} in the key file`);
  if (chosen.length > 1) {
    const list = pairs.map((k) => `  ${k.toSuiAddress()}`).join('\n');
    throw new CliError(`the keystore holds several keys; pick one with --address:\n${list}`);
  }
  const kp = chosen[0]!;
  return {
    chain: 'sui',
    address: kp.toSuiAddress(),
    async signMessage(message) {
      const { signature } = await kp.signPersonalMessage(new TextEncoder().encode(message));
      return signature;
    },
  };
}

export async function loadSignInKey(
  chain: 'sui' | 'solana',
  path: string,
  address?: string,
): Promise<SignInKey> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new CliError(
      `cannot read key file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  if (chain === 'solana') {
    const key = await solanaKey(text);
    if (address && address !== key.address)
      throw new CliError(`the key file holds ${key.address}, not ${address}`);
    return key;
  }
  return suiKey(text, address);
}
