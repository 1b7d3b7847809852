import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSolanaKeyFile, parseSolanaKeyFile, solanaWallet } from './solana.ts';

const BYTES = Array.from({ length: 64 }, (_, i) => (i * 37) % 256);

describe('Solana key files', () => {
  it('reads the CLI format: a JSON array of 64 byte values', () => {
    expect(Array.from(parseSolanaKeyFile(`${JSON.stringify(BYTES)}\n`))).toEqual(BYTES);
  });

  it('loads a key file from disk', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-solana-'));
    try {
      const path = join(dir, 'id.json');
      writeFileSync(path, JSON.stringify(BYTES));
      expect(Array.from(loadSolanaKeyFile(path))).toEqual(BYTES);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['not JSON', 'nope'],
    ['too short', JSON.stringify(BYTES.slice(0, 32))],
    ['a value over 255', JSON.stringify([...BYTES.slice(0, 63), 256])],
    ['a negative value', JSON.stringify([...BYTES.slice(0, 63), -1])],
    ['a fraction', JSON.stringify([...BYTES.slice(0, 63), 1.5])],
    ['an object', JSON.stringify({ secretKey: BYTES })],
  ])('refuses %s', (_name, text) => {
    expect(() => parseSolanaKeyFile(text)).toThrow(/Solana key file/);
  });

  it('takes the address from the public half of the keypair', () => {
    const pub = new Uint8Array(32); // the all-zero key is the system program's address
    const w = solanaWallet({
      secretKey: new Uint8Array([...new Uint8Array(32).fill(1), ...pub]),
      rpcUrl: 'http://127.0.0.1:9',
    });
    expect([w.chain, w.address]).toEqual(['solana', '11111111111111111111111111111111']);
  });
});
