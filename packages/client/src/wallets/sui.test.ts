import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeSuiPrivateKey } from '@mysten/sui/cryptography';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { toBase64 } from '@mysten/sui/utils';
import type { AcceptOption } from '@tollgate/protocol';
import { memoForNonce, USDC_SUI_COIN_TYPE } from '@tollgate/protocol';
import type { SuiSandbox } from '@tollgate/sandbox';
import { startSuiSandbox } from '@tollgate/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSuiKeyFile, parseSuiKeyFile, SuiPaymentError, suiWallet } from './sui.ts';

/** The 32-byte secret the keystore stores after the scheme flag. */
const seedOf = (kp: Ed25519Keypair) => decodeSuiPrivateKey(kp.getSecretKey()).secretKey;
const keystoreEntry = (kp: Ed25519Keypair) => toBase64(Uint8Array.of(0, ...seedOf(kp)));

describe('Sui key files', () => {
  const a = Ed25519Keypair.generate();
  const b = Ed25519Keypair.generate();

  it('reads a suiprivkey file', () => {
    expect(parseSuiKeyFile(`${a.getSecretKey()}\n`).toSuiAddress()).toBe(a.toSuiAddress());
  });

  it('reads the CLI keystore and picks a key by address', () => {
    const text = JSON.stringify([keystoreEntry(a), keystoreEntry(b)]);
    expect(parseSuiKeyFile(text).toSuiAddress()).toBe(a.toSuiAddress());
    expect(parseSuiKeyFile(text, { address: b.toSuiAddress() }).toSuiAddress()).toBe(b.toSuiAddress());
    expect(() => parseSuiKeyFile(text, { address: Ed25519Keypair.generate().toSuiAddress() })).toThrow(
      /no Ed25519 key/,
    );
  });

  it('loads a keystore from disk', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'sui-keys-')), 'sui.keystore');
    writeFileSync(path, JSON.stringify([keystoreEntry(b)]));
    expect(loadSuiKeyFile(path).toSuiAddress()).toBe(b.toSuiAddress());
  });

  it('refuses keystores without an Ed25519 key, and garbage', () => {
    const secp256k1 = toBase64(Uint8Array.of(1, ...new Uint8Array(32).fill(7)));
    expect(() => parseSuiKeyFile(JSON.stringify([secp256k1]))).toThrow(/no Ed25519 key/);
    expect(() => parseSuiKeyFile('[]')).toThrow(/keystore/);
    expect(() => parseSuiKeyFile('hello')).toThrow(/not a Sui key file/);
    expect(() => parseSuiKeyFile(JSON.stringify([toBase64(new Uint8Array(10))]))).toThrow(/flag \+ 32 bytes/);
  });

  it('takes the secret key as bech32, 32 bytes, or a keypair', () => {
    const rpcUrl = 'http://127.0.0.1:9';
    expect(suiWallet({ secretKey: a.getSecretKey(), rpcUrl }).address).toBe(a.toSuiAddress());
    expect(suiWallet({ secretKey: seedOf(a), rpcUrl }).address).toBe(a.toSuiAddress());
    expect(suiWallet({ secretKey: a, rpcUrl }).address).toBe(a.toSuiAddress());
    expect(() => suiWallet({ secretKey: new Uint8Array(31), rpcUrl })).toThrow();
    expect(() => suiWallet({ secretKey: 'not-a-key', rpcUrl })).toThrow(/suiprivkey1/);
  });
});

describe('suiWallet.pay on the sandbox chain', () => {
  let sui: SuiSandbox;
  beforeAll(async () => {
    sui = await startSuiSandbox();
  });
  afterAll(async () => {
    await sui?.close();
  });

  const provider = Ed25519Keypair.generate().toSuiAddress();
  const platform = Ed25519Keypair.generate().toSuiAddress();
  const option = (over: Partial<AcceptOption> = {}): AcceptOption => ({
    chain: 'sui',
    network: 'localnet',
    asset: 'USDC',
    totalAmount: '1',
    decimals: 6,
    coinType: USDC_SUI_COIN_TYPE,
    splits: [
      { recipientType: 'provider', payTo: provider, amount: '0.9' },
      { recipientType: 'platform', payTo: platform, amount: '0.1' },
    ],
    memo: memoForNonce(crypto.randomUUID().replaceAll('-', '')),
    ...over,
  });
  function payer(usdc: bigint) {
    const kp = Ed25519Keypair.generate();
    sui.faucet(kp.toSuiAddress(), usdc);
    return suiWallet({ secretKey: kp.getSecretKey(), rpcUrl: sui.url, network: 'localnet' });
  }

  it('pays both legs in one transaction, merging coins when no single coin is enough', async () => {
    const wallet = payer(600_000n);
    sui.faucet(wallet.address, 700_000n, 0n);
    const before = { provider: sui.balance(provider), platform: sui.balance(platform) };
    const digest = await wallet.pay(option());
    expect(digest).toMatch(/^[1-9A-HJ-NP-Za-km-z]{43,44}$/);
    expect(sui.balance(provider) - before.provider).toBe(900_000n);
    expect(sui.balance(platform) - before.platform).toBe(100_000n);
    expect(sui.balance(wallet.address)).toBe(300_000n);
  });

  it('makes a new transaction each time the same option is paid', async () => {
    const wallet = payer(5_000_000n);
    const opt = option();
    const first = await wallet.pay(opt);
    const second = await wallet.pay(opt);
    expect(second).not.toBe(first);
    expect(sui.balance(wallet.address)).toBe(3_000_000n);
  });

  it('fails without sending anything when the balance is too small', async () => {
    const wallet = payer(999_999n);
    await expect(wallet.pay(option())).rejects.toMatchObject({ code: 'payment_failed', digest: undefined });
    expect(sui.balance(wallet.address)).toBe(999_999n);
  });

  it.each<[string, Partial<AcceptOption>, string]>([
    ['another chain', { chain: 'solana' }, 'unsupported_chain'],
    ['another network', { network: 'mainnet' }, 'network_mismatch'],
    ['no coin type', { coinType: undefined }, 'invalid_requirement'],
    [
      'a coin type the wallet does not pay in',
      { coinType: `0x${'a'.repeat(64)}::usdc::USDC` },
      'invalid_requirement',
    ],
    ['decimals that do not match the coin', { decimals: 9 }, 'invalid_requirement'],
    ['splits that do not add up to the total', { totalAmount: '0.5' }, 'invalid_requirement'],
    ['an empty memo', { memo: '' }, 'invalid_requirement'],
    [
      'a recipient that is not a Sui address',
      {
        splits: [
          { recipientType: 'provider', payTo: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', amount: '1' },
        ],
      },
      'invalid_requirement',
    ],
  ])('refuses an option with %s before touching the chain', async (_name, over, code) => {
    const wallet = payer(5_000_000n);
    const err = await wallet.pay(option(over)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SuiPaymentError);
    expect(err).toMatchObject({ code, digest: undefined });
    expect(sui.balance(wallet.address)).toBe(5_000_000n);
  });

  it('refuses a mainnet option when its node is not on mainnet, even without a network set', async () => {
    const kp = Ed25519Keypair.generate();
    sui.faucet(kp.toSuiAddress(), 5_000_000n);
    const wallet = suiWallet({ secretKey: kp, rpcUrl: sui.url });
    await expect(wallet.pay(option({ network: 'mainnet' }))).rejects.toMatchObject({
      code: 'network_mismatch',
    });
    expect(sui.balance(kp.toSuiAddress())).toBe(5_000_000n);
  });
});
