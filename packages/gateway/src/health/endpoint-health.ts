/**
 * Endpoint health: passive (consecutive upstream failures on real traffic) and
 * active (a periodic probe of each API origin). An unhealthy endpoint answers
 * 503 endpoint_unavailable and never a 402, so nobody pays for a dead upstream.
 * State is per process; each process learns from its own traffic and probes. Each
 * transition (healthy -> unhealthy and back) is one log line with the endpoint and why.
 */
import type { Metrics } from '../metrics.ts';

export interface HealthOptions {
  /** Consecutive failures that mark an endpoint unhealthy. */
  failureThreshold: number;
  /** After this long without a successful probe, let real traffic try again (half-open). */
  cooldownMs: number;
  now?: () => number;
  metrics?: Metrics;
  /** The app's logger: transitions (warn when an endpoint goes unhealthy, info when it recovers). */
  log?: {
    warn(obj: Record<string, unknown>, msg: string): void;
    info(obj: Record<string, unknown>, msg: string): void;
  };
}

interface State {
  failures: number;
  unhealthySince: number | null;
  label: { project: string; endpoint: string };
  /** The gauge's value as last set (null: never), so a success on a healthy endpoint sets nothing. */
  published: 0 | 1 | null;
}

export interface ProbeTarget {
  apiId: string;
  baseUrl: string;
  endpoints: { id: string; project: string }[];
}

export function createHealthMonitor(opts: HealthOptions) {
  const now = opts.now ?? Date.now;
  const states = new Map<string, State>();
  let timer: NodeJS.Timeout | null = null;

  const state = (endpointId: string, project = ''): State => {
    let s = states.get(endpointId);
    if (!s) {
      s = { failures: 0, unhealthySince: null, label: { project, endpoint: endpointId }, published: null };
      states.set(endpointId, s);
    }
    return s;
  };
  const publish = (s: State, healthy: boolean) => {
    const value = healthy ? 1 : 0;
    if (s.published === value) return;
    s.published = value;
    opts.metrics?.endpointHealthy.set(s.label, value);
  };
  /** reason: `failures` (consecutive failed requests), `probe_failed`, `request_ok` or `probe_ok`. */
  const wentUnhealthy = (s: State, reason: 'failures' | 'probe_failed') =>
    opts.log?.warn(
      { project: s.label.project, endpoint: s.label.endpoint, reason, failures: s.failures },
      'endpoint unhealthy',
    );
  const recovered = (s: State, reason: 'request_ok' | 'probe_ok') =>
    opts.log?.info(
      { project: s.label.project, endpoint: s.label.endpoint, reason },
      'endpoint healthy again',
    );
  const succeed = (endpointId: string, project: string | undefined, reason: 'request_ok' | 'probe_ok') => {
    const s = state(endpointId, project);
    s.failures = 0;
    if (s.unhealthySince !== null) {
      s.unhealthySince = null;
      recovered(s, reason);
    }
    publish(s, true);
  };

  const monitor = {
    isHealthy(endpointId: string): boolean {
      const s = states.get(endpointId);
      if (!s || s.unhealthySince === null) return true;
      return now() - s.unhealthySince >= opts.cooldownMs;
    },
    recordSuccess(endpointId: string, project?: string): void {
      succeed(endpointId, project, 'request_ok');
    },
    recordFailure(endpointId: string, project?: string): void {
      const s = state(endpointId, project);
      s.failures += 1;
      if (s.failures >= opts.failureThreshold) {
        const was = s.unhealthySince;
        // Re-arm the cooldown on every failure while half-open.
        s.unhealthySince = now();
        publish(s, false);
        if (was === null) wentUnhealthy(s, 'failures');
      }
    },
    /** Marks every endpoint of a probed origin at once. */
    recordProbe(target: ProbeTarget, ok: boolean): void {
      for (const e of target.endpoints) {
        if (ok) succeed(e.id, e.project, 'probe_ok');
        else {
          const s = state(e.id, e.project);
          const was = s.unhealthySince;
          s.failures = Math.max(s.failures + 1, opts.failureThreshold);
          s.unhealthySince = now();
          publish(s, false);
          if (was === null) wentUnhealthy(s, 'probe_failed');
        }
      }
    },
    /** Starts active probing; `targets` is read fresh each round, `probe` resolves to true when healthy. */
    start(
      intervalMs: number,
      targets: () => Promise<ProbeTarget[]>,
      probe: (t: ProbeTarget) => Promise<boolean>,
    ): void {
      if (intervalMs <= 0 || timer) return;
      const round = async () => {
        try {
          const list = await targets();
          await Promise.all(list.map(async (t) => monitor.recordProbe(t, await probe(t).catch(() => false))));
        } catch {
          // A probe round that cannot even list targets changes nothing.
        }
      };
      timer = setInterval(() => void round(), intervalMs);
      timer.unref();
      void round();
    },
    stop(): void {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
  return monitor;
}

export type HealthMonitor = ReturnType<typeof createHealthMonitor>;
