import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { generateKeyPairSigner } from '@solana/kit';
import { describe, expect, it } from 'vitest';
import { normalizeAddress } from './addresses.ts';

describe('normalizeAddress', () => {
  it('accepts real Solana addresses as they are', async () => {
    const { address } = await generateKeyPairSigner();
    expect(normalizeAddress('solana', address)).toBe(address);
    expect(normalizeAddress('solana', '11111111111111111111111111111111')).toBe(
      '11111111111111111111111111111111',
    );
  });

  it('lower-cases Sui addresses so one wallet has one identity', () => {
    const address = Ed25519Keypair.generate().toSuiAddress();
    expect(
      normalizeAddress(
        'sui',
        address.replace(/[a-f]/g, (c) => c.toUpperCase()),
      ),
    ).toBe(address);
  });

  it.each([
    ['solana', '1111111111111111111111111111111'], // 31 bytes
    ['solana', '0OIl1111111111111111111111111111'], // not base58
    ['solana', `0x${'a'.repeat(64)}`],
    ['solana', 'JEKNVnkbo3jma5nREBBJCDoXFVeKkD56V3xKrvRmWxFGx'], // 45 chars
    ['sui', '0x2'],
    ['sui', 'a'.repeat(64)],
    ['sui', `0x${'a'.repeat(63)}`],
    ['sui', `0x${'a'.repeat(64)} `],
    ['sui', '11111111111111111111111111111111'],
  ] as const)('refuses %s address %j', (chain, address) => {
    expect(normalizeAddress(chain, address)).toBeNull();
  });

  it('refuses non-strings', () => {
    expect(normalizeAddress('sui', 42)).toBeNull();
    expect(normalizeAddress('solana', null)).toBeNull();
  });
});
