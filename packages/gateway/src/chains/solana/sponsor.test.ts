/**
 * The parts of the sponsor that need no chain: options, the per-payer limiter, and the
 * refusals made before any RPC call. The chain-backed cases (stock client payments,
 * draining attempts, settlement) are in test/chains/solana-sponsor.test.ts.
 */

import { SOLANA_MAINNET_CAIP2, USDC_SOLANA_MINT } from '@tollgate/protocol';
import { newSolanaKey } from '@tollgate/sandbox';
import { describe, expect, it } from 'vitest';
import { ChainUnavailableError } from '../chain.ts';
import { createPayerRateLimiter } from './payer-limit.ts';
import type { SolanaSponsorOptions } from './sponsor.ts';
import { createSolanaSponsor, SOLANA_SPONSOR_REASONS, X402_MAX_COMPUTE_UNIT_PRICE } from './sponsor.ts';

// Nothing listens here: any RPC call fails at once.
const DEAD_RPC = 'http://127.0.0.1:9';

const offline = (over: Partial<SolanaSponsorOptions> = {}) =>
  createSolanaSponsor({
    rpcUrl: DEAD_RPC,
    secretKey: newSolanaKey().secretKey,
    network: 'mainnet',
    caip2: SOLANA_MAINNET_CAIP2,
    timeoutMs: 1_000,
    ...over,
  });

describe('createPayerRateLimiter', () => {
  it('allows maxPerWindow distinct transactions per payer in a sliding window', () => {
    let t = 0;
    const limiter = createPayerRateLimiter({ maxPerWindow: 2, windowMs: 1_000, now: () => t });
    expect(limiter.take('alice', 'tx1')).toBe(true);
    t = 400;
    expect(limiter.take('alice', 'tx2')).toBe(true);
    expect(limiter.take('alice', 'tx3')).toBe(false);
    // The same transaction again is free, even at the cap.
    expect(limiter.take('alice', 'tx1')).toBe(true);
    expect(limiter.count('alice')).toBe(2);
    // Others have their own window.
    expect(limiter.take('bob', 'tx3')).toBe(true);
    // tx1 leaves the window at t = 1000, tx2 at 1400.
    t = 1_000;
    expect(limiter.count('alice')).toBe(1);
    expect(limiter.take('alice', 'tx3')).toBe(true);
    expect(limiter.take('alice', 'tx4')).toBe(false);
    t = 1_400;
    expect(limiter.take('alice', 'tx4')).toBe(true);
  });

  it('forgets the least recently seen payer past maxPayers', () => {
    const limiter = createPayerRateLimiter({ maxPerWindow: 1, maxPayers: 2, now: () => 0 });
    expect(limiter.take('a', '1')).toBe(true);
    expect(limiter.take('b', '1')).toBe(true);
    expect(limiter.take('a', '2')).toBe(false); // a is now the most recent
    expect(limiter.take('c', '1')).toBe(true); // b is forgotten
    expect(limiter.count('b')).toBe(0);
    expect(limiter.count('a')).toBe(1);
  });

  it('rejects nonsense options', () => {
    expect(() => createPayerRateLimiter({ maxPerWindow: 0 })).toThrow(RangeError);
    expect(() => createPayerRateLimiter({ maxPerWindow: 1.5 })).toThrow(RangeError);
    expect(() => createPayerRateLimiter({ maxPerWindow: 1, windowMs: 0 })).toThrow(RangeError);
    expect(() => createPayerRateLimiter({ maxPerWindow: 1, maxPayers: 0 })).toThrow(RangeError);
  });
});

describe('createSolanaSponsor options', () => {
  it('takes the 64-byte keypair or its 32-byte seed, nothing else', async () => {
    const key = newSolanaKey();
    expect((await offline({ secretKey: key.secretKey })).address).toBe(key.address);
    expect((await offline({ secretKey: key.secretKey.slice(0, 32) })).address).toBe(key.address);
    await expect(offline({ secretKey: new Uint8Array(33) })).rejects.toThrow(TypeError);
    // A keypair whose public half does not match its seed.
    const forged = Uint8Array.from(key.secretKey);
    forged[40] = (forged[40] ?? 0) ^ 1;
    await expect(offline({ secretKey: forged })).rejects.toThrow();
  });

  it('caps the compute unit price at the x402 maximum', async () => {
    await expect(offline({ maxComputeUnitPrice: X402_MAX_COMPUTE_UNIT_PRICE + 1n })).rejects.toThrow(
      RangeError,
    );
    await expect(offline({ maxComputeUnitPrice: -1 })).rejects.toThrow(RangeError);
    await expect(offline({ maxComputeUnitLimit: 0 })).rejects.toThrow(RangeError);
    await offline({ maxComputeUnitPrice: X402_MAX_COMPUTE_UNIT_PRICE });
  });

  it('wants a well-formed CAIP-2 id, or asks the node for its genesis (ChainUnavailableError when it cannot)', async () => {
    await expect(offline({ caip2: 'solana:mainnet' })).rejects.toThrow(TypeError);
    await expect(offline({ caip2: undefined })).rejects.toBeInstanceOf(ChainUnavailableError);
    await expect(offline({ mint: 'not-an-address' })).rejects.toThrow(TypeError);
  });

  it('refuses undecodable payloads before asking the node anything', async () => {
    const sponsor = await offline();
    const expected = { payTo: sponsor.address, amount: 1n, asset: USDC_SOLANA_MINT, memo: 'm' };
    for (const payload of [{}, { transaction: null }, { transaction: '%%%' }, { transaction: 'AAAA' }]) {
      const result = await sponsor.check(payload, expected);
      expect(result).toMatchObject({
        ok: false,
        reason: 'invalid_exact_svm_payload_transaction_could_not_be_decoded',
      });
    }
    await expect(sponsor.settle({ txId: 'x', payer: 'y', handle: null })).rejects.toThrow(TypeError);
  });

  it('names its reasons in x402 style, without duplicates', () => {
    expect(new Set(SOLANA_SPONSOR_REASONS).size).toBe(SOLANA_SPONSOR_REASONS.length);
    for (const r of SOLANA_SPONSOR_REASONS) expect(r).toMatch(/^[a-z0-9_]+$/);
  });
});
