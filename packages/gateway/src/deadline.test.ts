import { describe, expect, it } from 'vitest';
import { withDeadline } from './deadline.ts';

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

  it('with race, answers at the deadline for a step that ignores its signal, with onTimeout as the reason', async () => {
    class Late extends Error {}
    let seen: AbortSignal | undefined;
    const err = await withDeadline(
      10,
      (signal) => {
        seen = signal;
        return new Promise(() => {});
      },
      { race: true, onTimeout: () => new Late() },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Late);
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBe(err);
  });
});
