import { describe, expect, it } from 'vitest';
import { ChainUnavailableError } from './chain.ts';
import { askChain, withDeadline } from './deadline.ts';

describe('withDeadline', () => {
  it('answers what the call answers, and its signal never aborts after that', async () => {
    let seen: AbortSignal | undefined;
    await expect(
      withDeadline(20, async (signal) => {
        seen = signal;
        return 42;
      }),
    ).resolves.toBe(42);
    await new Promise((r) => setTimeout(r, 40));
    expect(seen?.aborted).toBe(false);
  });

  it('aborts a call that outlives the deadline with a TimeoutError, as AbortSignal.timeout does', async () => {
    const err = await withDeadline(
      10,
      (signal) =>
        new Promise((_, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason));
        }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DOMException);
    expect((err as DOMException).name).toBe('TimeoutError');
  });

  it('passes a failing call on unchanged', async () => {
    const boom = new Error('boom');
    await expect(withDeadline(1000, async () => Promise.reject(boom))).rejects.toBe(boom);
  });

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
