/** Each health transition is one log line with the endpoint and why; nothing in between. */
import { describe, expect, it } from 'vitest';
import { createHealthMonitor } from './endpoint-health.ts';

function recorder() {
  const lines: { level: 'warn' | 'info'; obj: Record<string, unknown>; msg: string }[] = [];
  return {
    lines,
    log: {
      warn: (obj: Record<string, unknown>, msg: string) => void lines.push({ level: 'warn', obj, msg }),
      info: (obj: Record<string, unknown>, msg: string) => void lines.push({ level: 'info', obj, msg }),
    },
  };
}

describe('endpoint health transitions', () => {
  it('logs going unhealthy once (warn) and recovering once (info), with project, endpoint and reason', () => {
    let t = 0;
    const { lines, log } = recorder();
    const h = createHealthMonitor({ failureThreshold: 3, cooldownMs: 1000, now: () => t, log });
    h.recordFailure('ep_1', 'shop');
    h.recordFailure('ep_1', 'shop');
    expect(lines).toEqual([]);
    h.recordFailure('ep_1', 'shop');
    h.recordFailure('ep_1', 'shop');
    // Half-open: a failed trial re-arms the cooldown without a second line.
    t = 2000;
    h.recordFailure('ep_1', 'shop');
    expect(lines).toEqual([
      {
        level: 'warn',
        msg: 'endpoint unhealthy',
        obj: { project: 'shop', endpoint: 'ep_1', reason: 'failures', failures: 3 },
      },
    ]);
    h.recordSuccess('ep_1', 'shop');
    h.recordSuccess('ep_1', 'shop');
    expect(lines.slice(1)).toEqual([
      {
        level: 'info',
        msg: 'endpoint healthy again',
        obj: { project: 'shop', endpoint: 'ep_1', reason: 'request_ok' },
      },
    ]);
  });

  it('logs probe transitions for every endpoint of the origin', () => {
    const { lines, log } = recorder();
    const h = createHealthMonitor({ failureThreshold: 5, cooldownMs: 60_000, now: () => 0, log });
    const target = {
      apiId: 'api_1',
      baseUrl: 'http://origin.test',
      endpoints: [
        { id: 'ep_a', project: 'shop' },
        { id: 'ep_b', project: 'shop' },
      ],
    };
    h.recordProbe(target, true);
    expect(lines).toEqual([]);
    h.recordProbe(target, false);
    h.recordProbe(target, false);
    expect(lines.map((l) => [l.level, l.obj['endpoint'], l.obj['reason']])).toEqual([
      ['warn', 'ep_a', 'probe_failed'],
      ['warn', 'ep_b', 'probe_failed'],
    ]);
    h.recordProbe(target, true);
    expect(lines.slice(2).map((l) => [l.level, l.msg, l.obj['endpoint'], l.obj['reason']])).toEqual([
      ['info', 'endpoint healthy again', 'ep_a', 'probe_ok'],
      ['info', 'endpoint healthy again', 'ep_b', 'probe_ok'],
    ]);
  });
});
