/**
 * The payout command pays only from the platform wallet: PLATFORM_*_KEY (a key file in
 * the chains' CLI formats, or the key itself) must derive PLATFORM_*_ADDRESS, else a
 * clear refusal that never echoes the key.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeSuiPrivateKey } from '@mysten/sui/cryptography';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { getBase58Decoder } from '@solana/kit';
import { newSolanaKey, newSuiKey, saveSolanaKeyFile, saveSuiKeyFile } from '@tollgate/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.ts';
import { loadPlatformKey, PlatformKeyError } from '../../src/ops/platform-keys.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-keys-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type KeyConfig = Parameters<typeof loadPlatformKey>[0];

const production = (patch: Partial<Config>): KeyConfig => ({
  sandbox: false,
  dataDir: dir,
  platformSolanaKey: null,
  platformSuiKey: null,
  platformSolanaAddress: null,
  platformSuiAddress: null,
  ...patch,
});

async function refusal(config: KeyConfig, chain: 'solana' | 'sui'): Promise<string> {
  try {
    await loadPlatformKey(config, chain);
  } catch (e) {
    expect(e).toBeInstanceOf(PlatformKeyError);
    return (e as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('Solana platform key', () => {
  it('loads a solana-keygen file, inline base58 or an inline JSON array that derives the platform address', async () => {
    const key = newSolanaKey();
    const file = join(dir, 'platform.json');
    saveSolanaKeyFile(file, key);
    for (const value of [
      file,
      getBase58Decoder().decode(key.secretKey),
      JSON.stringify([...key.secretKey]),
    ]) {
      const loaded = await loadPlatformKey(
        production({ platformSolanaKey: value, platformSolanaAddress: key.address }),
        'solana',
      );
      expect(loaded).toEqual({ chain: 'solana', address: key.address, secretKey: key.secretKey });
    }
  });

  it('refuses a key of another wallet, naming both addresses and not the key', async () => {
    const key = newSolanaKey();
    const platform = newSolanaKey().address;
    const inline = getBase58Decoder().decode(key.secretKey);
    const msg = await refusal(
      production({ platformSolanaKey: inline, platformSolanaAddress: platform }),
      'solana',
    );
    expect(msg).toContain(key.address);
    expect(msg).toContain(platform);
    expect(msg).toContain('refusing to pay out from another wallet');
    expect(msg).not.toContain(inline);
  });

  it('refuses missing settings, missing files, garbage and a keypair whose halves disagree', async () => {
    const address = newSolanaKey().address;
    expect(await refusal(production({ platformSolanaAddress: address }), 'solana')).toMatch(
      /PLATFORM_SOLANA_KEY is not set/,
    );
    expect(await refusal(production({ platformSolanaKey: join(dir, 'nope.json') }), 'solana')).toMatch(
      /no such key file/,
    );
    const key = newSolanaKey();
    expect(
      await refusal(production({ platformSolanaKey: getBase58Decoder().decode(key.secretKey) }), 'solana'),
    ).toMatch(/PLATFORM_SOLANA_ADDRESS is not set/);
    expect(
      await refusal(production({ platformSolanaKey: 'not-a-key', platformSolanaAddress: address }), 'solana'),
    ).toMatch(/not a Solana keypair/);
    const mixed = Uint8Array.from([
      ...key.secretKey.subarray(0, 32),
      ...newSolanaKey().secretKey.subarray(32),
    ]);
    expect(
      await refusal(
        production({ platformSolanaKey: getBase58Decoder().decode(mixed), platformSolanaAddress: address }),
        'solana',
      ),
    ).toMatch(/public half does not match/);
  });
});

describe('Sui platform key', () => {
  it('loads a suiprivkey (inline or file) and picks the platform key out of a keystore', async () => {
    const key = newSuiKey();
    const file = join(dir, 'platform-sui.key');
    saveSuiKeyFile(file, key);
    for (const value of [key.secretKey, file]) {
      const loaded = await loadPlatformKey(
        production({ platformSuiKey: value, platformSuiAddress: key.address }),
        'sui',
      );
      expect(loaded.address).toBe(key.address);
    }
    // A sui.keystore entry is base64 of the scheme flag (0: Ed25519) and the 32-byte secret.
    const other = Ed25519Keypair.generate();
    const raw = Buffer.from([0, ...decodeSuiPrivateKey(other.getSecretKey()).secretKey]).toString('base64');
    const keystore = join(dir, 'sui.keystore');
    writeFileSync(keystore, JSON.stringify([raw, key.secretKey]));
    const picked = await loadPlatformKey(
      production({ platformSuiKey: keystore, platformSuiAddress: key.address }),
      'sui',
    );
    expect(picked.address).toBe(key.address);
  });

  it('refuses a key of another wallet', async () => {
    const key = newSuiKey();
    const platform = newSuiKey().address;
    const msg = await refusal(
      production({ platformSuiKey: key.secretKey, platformSuiAddress: platform }),
      'sui',
    );
    expect(msg).toContain('refusing to pay out from another wallet');
    expect(msg).toContain(key.address);
    expect(msg).not.toContain(key.secretKey);
  });
});

describe('sandbox mode', () => {
  it("uses the sandbox wallets, and only them, as the platform's", async () => {
    const data = mkdtempSync(join(dir, 'data-'));
    const sandbox = (patch: Partial<Config> = {}) => ({ ...production(patch), sandbox: true, dataDir: data });
    expect(await refusal(sandbox(), 'solana')).toMatch(/no sandbox platform key/);
    const solana = newSolanaKey();
    saveSolanaKeyFile(join(data, 'sandbox', 'platform-solana.json'), solana);
    expect((await loadPlatformKey(sandbox(), 'solana')).address).toBe(solana.address);
    // Another key is refused even when the address variable names it: sandbox mode pays to its own wallet.
    const other = newSolanaKey();
    const msg = await refusal(
      sandbox({
        platformSolanaKey: getBase58Decoder().decode(other.secretKey),
        platformSolanaAddress: other.address,
      }),
      'solana',
    );
    expect(msg).toContain(solana.address);
  });
});
