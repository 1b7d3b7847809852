import { describe, expect, it } from 'vitest';
import { ChainUnavailableError } from './chain.ts';
import { askChain } from './deadline.ts';

describe('askChain', () => {
  it('askChain turns any failure, the deadline included, into a retryable ChainUnavailableError naming the call', async () => {
    const err = await askChain(
      'solana',
      'getTransaction',
      10,
      (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChainUnavailableError);
    expect((err as ChainUnavailableError).chain).toBe('solana');
    expect((err as Error).message).toMatch(/^getTransaction failed: .*timeout/);
    await expect(askChain('sui', 'x', 1000, async () => 7)).resolves.toBe(7);
  });
});
