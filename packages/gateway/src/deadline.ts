/** `race`: settle at the deadline even if the step does not stop; `onTimeout`: the reason. */
export interface DeadlineOptions {
  race?: boolean;
  onTimeout?: () => Error;
}

// Shared defaults: every chain call passes through here, so nothing is made per call for them.
const NO_OPTIONS: DeadlineOptions = Object.freeze({});
const timeoutError = () => new DOMException('The operation was aborted due to timeout', 'TimeoutError');

/**
 * One deadline for a step that may not answer: a chain's node, a readiness check, a server at
 * start-up. The step gets a signal that aborts at the deadline, with `onTimeout()` as the
 * reason (by default a `TimeoutError` DOMException, as `AbortSignal.timeout` gives). With
 * `race`, the deadline also settles the result for a step that cannot be stopped. The timer
 * goes when the step settles: `AbortSignal.timeout(ms)` keeps its own for the whole `ms` (10 s
 * per verification RPC: thousands of them pending under load, each outliving V8's young
 * generation). A pending deadline alone never keeps the process alive.
 */
export async function withDeadline<T>(
  ms: number,
  step: (signal: AbortSignal) => Promise<T>,
  opts: DeadlineOptions = NO_OPTIONS,
): Promise<T> {
  const controller = new AbortController();
  const onTimeout = opts.onTimeout ?? timeoutError;
  let reject: ((reason: unknown) => void) | null = null;
  const timer = setTimeout(() => {
    const reason = onTimeout();
    reject?.(reason);
    controller.abort(reason);
  }, ms);
  timer.unref();
  try {
    const running = step(controller.signal);
    if (!opts.race) return await running;
    return await Promise.race([running, new Promise<never>((_, r) => (reject = r))]);
  } finally {
    clearTimeout(timer);
  }
}
