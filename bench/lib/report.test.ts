import { describe, expect, it } from 'vitest';
import {
  type ConfigSummary,
  paidYardstick,
  ratioTarget,
  type ScenarioSummary,
  tailTargets,
} from './report.ts';

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

describe('ratioTarget', () => {
  const gateway = config('gateway', 45, { bare: 0.44, lean402: 0.69 }, { bare: 2.33, lean402: 1.46 });
  const lean = config('lean402', 32, { bare: 0.6 }, { bare: 1.67 });
  const bare = config('bare', 19, {}, {});
  const scenario: ScenarioSummary = {
    key: '402',
    title: '402',
    baselines: ['bare', 'lean402'],
    configs: [gateway, lean, bare],
    stealSec: 0,
    loadCpuBusy: 0.3,
  };

  it('judges the gateway alone and prints where the same work alone stands against the same baseline', () => {
    const t = ratioTarget('402 ≥ 0.6× bare', scenario, 'gateway', 'bare', 0.6, ['lean402']);
    expect(t.holds).toBe(false);
    expect(t.detail).toBe(
      '0.44× (target ≥ 0.6×): 1000 vs 1000 req/s median; CPU 45 vs 19 µs/req; the same work alone, same rounds: lean402 0.60×',
    );
  });

  it('prints no yardstick that the run did not measure', () => {
    const t = ratioTarget(
      '402 ≥ 0.6× bare',
      { ...scenario, configs: [gateway, bare] },
      'gateway',
      'bare',
      0.6,
      ['lean402'],
    );
    expect(t.detail).not.toContain('same work alone');
  });

  it('is not measured without the scenario', () => {
    expect(ratioTarget('x', undefined, 'gateway', 'bare', 0.6).detail).toBe('not measured');
  });
});

describe('tailTargets', () => {
  it("judges only our configurations and prints the other servers' tails from the same rounds", () => {
    const scenario: ScenarioSummary = {
      key: 'free',
      title: 'forward',
      baselines: ['nginx'],
      configs: [
        { ...config('gateway', 70, {}, {}), tail: 4.5 },
        { ...config('nginx', 19, {}, {}), tail: 2.25 },
      ],
      stealSec: 0,
      loadCpuBusy: 0.3,
    };
    const [t, ...rest] = tailTargets([scenario], (k) => k === 'gateway');
    expect(rest).toHaveLength(0);
    expect(t!.holds).toBe(false);
    expect(t!.detail).toBe(
      'p99/p50 = 4.50 (p50 30.00 ms, p99 90.00 ms); the others, same rounds: nginx 2.25',
    );
  });

  it('does not hold a tail that could not be measured, live (NaN) or read back from a saved run (null)', () => {
    for (const tail of [Number.NaN, null as unknown as number]) {
      const scenario: ScenarioSummary = {
        key: 'free',
        title: 'forward',
        baselines: [],
        configs: [{ ...config('gateway', 70, {}, {}), tail }],
        stealSec: 0,
        loadCpuBusy: 0.3,
      };
      expect(tailTargets([scenario], (k) => k === 'gateway')[0]!.holds).toBe(false);
    }
  });
});
