import { describe, expect, it } from 'vitest';
import { type ConfigSummary, paidYardstick, type ScenarioSummary } from './report.ts';

function config(
  key: string,
  cpuUsPerReq: number,
  ratios: Record<string, number>,
  cpuRatios: Record<string, number>,
): ConfigSummary {
  return {
    key,
    label: key,
    rps: 1000,
    rpsRange: [900, 1100],
    p50Ms: 30,
    p99Ms: 90,
    tail: 3,
    cpuUsPerReq,
    sysShare: 0.3,
    cpuBusy: [0.66, 0.3],
    othersUsPerReq: {},
    ratios,
    cpuRatios,
    problems: [],
  };
}

function paidScenario(configs: ConfigSummary[]): ScenarioSummary[] {
  return [
    {
      key: 'paid',
      title: 'paid',
      baselines: ['floor', 'paidfloor', 'paidrecord'],
      configs,
      stealSec: 0,
      loadCpuBusy: 0.3,
    },
  ];
}

describe('paidYardstick', () => {
  const gateway = config(
    'gateway',
    1100,
    { floor: 0.12, paidfloor: 0.51, paidrecord: 0.73 },
    { paidfloor: 2.1, paidrecord: 1.38 },
  );
  const lean = config('paidfloor', 526, { floor: 0.24 }, {});
  const record = config('paidrecord', 837, { floor: 0.16 }, { paidfloor: 1.59 });

  it('places the gateway against the paid work alone and against the same work with its redemption record', () => {
    const note = paidYardstick(paidScenario([gateway, lean, record]))!;
    const [alone, withRecord] = note.split('\n');
    expect(alone).toBe(
      'note    the paid work alone (minimal paid server): 0.24× minimal forwarder, 526 µs/req; the gateway 0.51× of it (CPU 2.10×)',
    );
    expect(withRecord).toContain("the paid work with Tollgate's redemption record");
    expect(withRecord).toContain("0.16× minimal forwarder, 837 µs/req (1.59× the minimal paid server's CPU)");
    expect(withRecord).toContain('the gateway 0.73× of it (CPU 1.38×)');
  });

  it('prints only the paid work alone when the run had no server with the redemption record', () => {
    const note = paidYardstick(paidScenario([gateway, lean]))!;
    expect(note.split('\n')).toHaveLength(1);
  });

  it('prints nothing without a paid scenario', () => {
    expect(paidYardstick([])).toBeNull();
  });
});
