import { describe, expect, it } from 'vitest';
import { createHealthMonitor } from './endpoint-health.ts';

describe('endpoint health', () => {
  it('marks an endpoint unhealthy after consecutive failures and healthy after a success', () => {
    const t = 0;
    const h = createHealthMonitor({ failureThreshold: 3, cooldownMs: 10_000, now: () => t });
    h.recordFailure('e1');
    h.recordFailure('e1');
    expect(h.isHealthy('e1')).toBe(true);
    h.recordFailure('e1');
    expect(h.isHealthy('e1')).toBe(false);
    h.recordSuccess('e1');
    expect(h.isHealthy('e1')).toBe(true);
  });

  it('lets traffic try again after the cooldown (half-open)', () => {
    let t = 0;
    const h = createHealthMonitor({ failureThreshold: 1, cooldownMs: 10_000, now: () => t });
    h.recordFailure('e1');
    t = 9_999;
    expect(h.isHealthy('e1')).toBe(false);
    t = 10_000;
    expect(h.isHealthy('e1')).toBe(true);
    h.recordFailure('e1');
    expect(h.isHealthy('e1')).toBe(false);
  });

  it('applies a failed probe to every endpoint of the origin at once', () => {
    const h = createHealthMonitor({ failureThreshold: 5, cooldownMs: 60_000, now: () => 0 });
    const target = {
      apiId: 'a',
      baseUrl: 'http://x',
      endpoints: [
        { id: 'e1', project: 'p' },
        { id: 'e2', project: 'p' },
      ],
    };
    h.recordProbe(target, false);
    expect(h.isHealthy('e1')).toBe(false);
    expect(h.isHealthy('e2')).toBe(false);
    h.recordProbe(target, true);
    expect(h.isHealthy('e1')).toBe(true);
  });
});
