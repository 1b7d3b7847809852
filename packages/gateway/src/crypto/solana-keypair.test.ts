import { getBase58Decoder } from '@solana/kit';
import { describe, expect, it } from 'vitest';
import { parseSolanaKeypair } from './solana-keypair.ts';

describe('parseSolanaKeypair', () => {
  const bytes = Uint8Array.from({ length: 64 }, (_, i) => (i === 0 ? 0 : i));
  it('reads the JSON array and the base58 of 64 bytes (leading zero bytes included)', () => {
    expect(parseSolanaKeypair(JSON.stringify([...bytes]))).toEqual(bytes);
    expect(parseSolanaKeypair(` ${getBase58Decoder().decode(bytes)}\n`)).toEqual(bytes);
  });
  it('refuses anything else', () => {
    for (const bad of [
      '',
      '[1,2,3]',
      '[300]',
      '[',
      'not base58 0OIl',
      getBase58Decoder().decode(bytes.subarray(0, 32)),
    ]) {
      expect(parseSolanaKeypair(bad)).toBeNull();
    }
  });
});
