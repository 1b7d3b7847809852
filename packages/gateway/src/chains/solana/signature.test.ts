import { randomBytes } from 'node:crypto';
import { getBase58Decoder, getBase58Encoder, isSignature } from '@solana/kit';
import { describe, expect, it } from 'vitest';
import { base58ByteLength, isSolanaSignature } from './signature.ts';

const b58 = getBase58Decoder();
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

describe('isSolanaSignature', () => {
  it('agrees with @solana/kit on real signatures and every length and edge around 64 bytes', () => {
    const samples: string[] = [];
    for (let n = 60; n <= 68; n++) {
      for (let k = 0; k < 40; k++) samples.push(b58.decode(randomBytes(n)));
      samples.push(b58.decode(new Uint8Array(n)), b58.decode(new Uint8Array(n).fill(255)));
      const lead = new Uint8Array(n);
      lead[n - 1] = 1;
      samples.push(b58.decode(lead));
    }
    for (let k = 0; k < 200; k++) {
      const len = 62 + (k % 30);
      let s = '';
      for (let i = 0; i < len; i++) s += ALPHABET[Math.floor(Math.random() * 58)];
      if (k % 5 === 0) s = `1111${s.slice(4)}`;
      samples.push(s);
    }
    for (const s of samples) expect([s, isSolanaSignature(s)]).toEqual([s, isSignature(s)]);
    expect(samples.filter((s) => isSolanaSignature(s)).length).toBeGreaterThan(40);
  });

  it('counts the bytes of any base58 text as @solana/kit decodes it, at every length', () => {
    const encoder = getBase58Encoder();
    for (let len = 0; len <= 120; len++) {
      for (let k = 0; k < 12; k++) {
        let s = '';
        for (let i = 0; i < len; i++) s += ALPHABET[Math.floor(Math.random() * 58)];
        if (k % 3 === 0) s = `${'1'.repeat(Math.min(len, k))}${s.slice(Math.min(len, k))}`;
        if (k === 1) s = 'z'.repeat(len);
        expect([s, base58ByteLength(s)]).toEqual([s, encoder.encode(s).length]);
      }
    }
  });

  it('refuses what is not base58 or not a string', () => {
    const good = b58.decode(randomBytes(64));
    expect(isSolanaSignature(good)).toBe(true);
    for (const bad of [`0${good.slice(1)}`, `${good.slice(1)}l`, `${good.slice(1)}é`, '', 'abc', 7, null]) {
      expect(isSolanaSignature(bad)).toBe(false);
    }
    expect(base58ByteLength('0OIl')).toBe(-1);
    expect(base58ByteLength('1112')).toBe(4);
  });
});
