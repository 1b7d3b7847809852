/**
 * Readiness (/readyz): the database and every configured chain node, each asked with a
 * short timeout, all at once. The answer is kept for a few seconds and concurrent callers
 * share one round, so however often /readyz is polled, each node is asked at most once
 * per `ttlMs`.
 */
import { withDeadline } from '../deadline.ts';

export interface ReadinessCheck {
  /** Key in the report: `database`, `solana`, `sui`. */
  name: string;
  /** Resolves when up; rejects when down. Should stop when `signal` aborts. */
  run(signal: AbortSignal): Promise<unknown>;
}

export type CheckState = 'ok' | 'down';

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckState>;
  /** Why each check that is down is down: `timeout`, `unreachable` or `unhealthy` (nothing more, it is public). */
  reasons: Record<string, string>;
}

export interface ReadinessOptions {
  /** The clock the cache runs on (deps.now, so tests can move it). */
  now: () => number;
  /** How long a report is served before the checks run again. Default 3 s. */
  ttlMs?: number;
  /** Per check. Default 2 s. */
  timeoutMs?: number;
  /** Also run in each round, under the same timeout, without deciding readiness (the sponsor's balance). */
  alongside?: () => Promise<unknown>;
  /** A check changed state (first round included when down): for the log. */
  onChange?: (name: string, state: CheckState, reason: string | null) => void;
}

export const READINESS_TTL_MS = 3_000;
export const READINESS_TIMEOUT_MS = 2_000;

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** A short, public reason: never the error's text (it may name hosts or carry keys). */
function reasonOf(e: unknown): string {
  if (e instanceof TimeoutError) return 'timeout';
  for (let cur: unknown = e, depth = 0; cur && depth < 5; depth++) {
    const c = cur as { code?: unknown; errors?: unknown[]; cause?: unknown; message?: unknown };
    if (typeof c.code === 'string' && NETWORK_CODES.has(c.code)) return 'unreachable';
    // undici's fetch; the Sui gRPC transport keeps only this message of it.
    if (c.message === 'fetch failed') return 'unreachable';
    cur = c.cause ?? c.errors?.[0];
  }
  return 'unhealthy';
}

class TimeoutError extends Error {}

/** Runs `step` under a timeout; the signal tells it to stop, the race covers a step that cannot. */
const withTimeout = (step: (signal: AbortSignal) => Promise<unknown>, ms: number): Promise<unknown> =>
  withDeadline(ms, step, { race: true, onTimeout: () => new TimeoutError() });

export function createReadiness(checks: readonly ReadinessCheck[], opts: ReadinessOptions) {
  const ttlMs = opts.ttlMs ?? READINESS_TTL_MS;
  const timeoutMs = opts.timeoutMs ?? READINESS_TIMEOUT_MS;
  let cached: { at: number; report: ReadinessReport } | null = null;
  let round: Promise<ReadinessReport> | null = null;
  const last = new Map<string, CheckState>();

  async function runRound(): Promise<ReadinessReport> {
    const [results] = await Promise.all([
      Promise.all(
        checks.map(async (check) => {
          try {
            await withTimeout((signal) => check.run(signal), timeoutMs);
            return { name: check.name, state: 'ok' as const, reason: null };
          } catch (e) {
            return { name: check.name, state: 'down' as const, reason: reasonOf(e) };
          }
        }),
      ),
      opts.alongside ? withTimeout(() => opts.alongside!(), timeoutMs).catch(() => {}) : null,
    ]);
    const report: ReadinessReport = { ready: true, checks: {}, reasons: {} };
    for (const r of results) {
      report.checks[r.name] = r.state;
      if (r.reason) report.reasons[r.name] = r.reason;
      if (r.state === 'down') report.ready = false;
      const before = last.get(r.name);
      if (before !== r.state && (before !== undefined || r.state === 'down'))
        opts.onChange?.(r.name, r.state, r.reason);
      last.set(r.name, r.state);
    }
    return report;
  }

  return {
    /** The last report if younger than the TTL, else a new round (shared by concurrent callers). */
    async report(): Promise<ReadinessReport> {
      if (cached && opts.now() - cached.at < ttlMs) return cached.report;
      round ??= runRound()
        .then((report) => {
          cached = { at: opts.now(), report };
          return report;
        })
        .finally(() => {
          round = null;
        });
      return round;
    },
  };
}

export type Readiness = ReturnType<typeof createReadiness>;
