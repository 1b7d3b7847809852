import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { HotCounter, HotHistogram } from './hot-metrics.ts';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const NAMES = ['route', 'method', 'status'] as const;
type Name = (typeof NAMES)[number];

/** The same metrics twice: prom-client's classes in one registry, ours in another. */
function pair() {
  const theirs = new Registry();
  const ours = new Registry();
  const def = { name: 't_requests_total', help: 'requests "by" route\\method', labelNames: NAMES };
  const hdef = {
    name: 't_duration_seconds',
    help: 'duration',
    labelNames: ['route'] as const,
    buckets: BUCKETS,
  };
  return {
    theirs,
    ours,
    counters: [
      new Counter({ ...def, registers: [theirs] }),
      new HotCounter({ ...def, registers: [ours] }),
    ] as const,
    histograms: [
      new Histogram({ ...hdef, registers: [theirs] }),
      new HotHistogram({ ...hdef, registers: [ours] }),
    ] as const,
  };
}

const labelValue = fc.constantFrom('marketplace', 'chat', 'GET', 'POST', '402', '200', 'a"b\\c\nd', 'é');
const event = fc.record({
  labels: fc.record({ route: labelValue, method: labelValue, status: labelValue }),
  by: fc.constantFrom(1, 1, 1, 2, 0.5),
  // Bounds themselves, values between and beyond them, zero and negatives.
  seconds: fc.oneof(
    fc.constantFrom(...BUCKETS, 0, -1, 31, 1e9),
    fc.double({ min: -1, max: 100, noNaN: true, noDefaultInfinity: true }),
  ),
});

describe('the hot-path counter and histogram', () => {
  it('expose what prom-client exposes for the same observations: text and get()', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(event, { maxLength: 60 }), async (events) => {
        const { theirs, ours, counters, histograms } = pair();
        for (const e of events) {
          for (const c of counters) c.inc(e.labels, e.by);
          for (const h of histograms) h.observe({ route: e.labels.route }, e.seconds);
        }
        expect(await ours.metrics()).toBe(await theirs.metrics());
        expect(await counters[1].get()).toEqual(await counters[0].get());
        expect(await histograms[1].get()).toEqual(await histograms[0].get());
        expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
      }),
      { numRuns: 200 },
    );
  });

  it('start over on a registry reset, as prom-client does', async () => {
    const { theirs, ours, counters, histograms } = pair();
    for (const c of counters) c.inc({ route: 'chat', method: 'GET', status: '200' });
    for (const h of histograms) h.observe({ route: 'chat' }, 0.2);
    theirs.resetMetrics();
    ours.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    for (const c of counters) c.inc({ route: 'p', method: 'GET', status: '402' });
    for (const h of histograms) h.observe({ route: 'p' }, 0.001);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect((await counters[1].get()).values).toEqual([
      { value: 1, labels: { route: 'p', method: 'GET', status: '402' } },
    ]);
  });

  it('refuse what prom-client refuses: an unknown label, a decrease, a value that is not a number', () => {
    const { counters, histograms } = pair();
    const [, counter] = counters;
    const [, histogram] = histograms;
    expect(() => counter.inc({ route: 'x', verb: 'GET' } as Partial<Record<Name, string>>)).toThrow(
      /not included/,
    );
    // Also on a series that exists already, as prom-client (its counter is checked alike).
    for (const c of counters) {
      c.inc({ route: 'x', method: 'GET', status: '200' });
      expect(() =>
        c.inc({ route: 'x', method: 'GET', status: '200', verb: 'GET' } as Partial<Record<Name, string>>),
      ).toThrow(/not included/);
    }
    expect(() => counter.inc({ route: 'x' }, -1)).toThrow(/not possible/);
    expect(() => counter.inc({ route: 'x' }, Number.POSITIVE_INFINITY)).toThrow(TypeError);
    expect(() => histogram.observe({ route: 'x' }, Number.NaN)).toThrow(TypeError);
    expect(() => histogram.observe({ route: 'x' }, Number.POSITIVE_INFINITY)).toThrow(TypeError);
  });

  it('count as prom-client does where it does not refuse: a number label, a null or NaN increment, a metric without labels', async () => {
    const theirs = new Registry();
    const ours = new Registry();
    const def = { name: 'x_total', help: 'x', labelNames: ['status'] as const };
    const plain = { name: 'y_total', help: 'y', labelNames: [] as const };
    const counters = [
      new Counter({ ...def, registers: [theirs] }),
      new HotCounter({ ...def, registers: [ours] }),
    ] as const;
    new Counter({ ...plain, registers: [theirs] });
    new HotCounter({ ...plain, registers: [ours] });
    for (const c of counters) {
      c.inc({ status: 402 as unknown as string });
      c.inc({ status: '402' });
      c.inc({ status: '200' }, null as unknown as number);
      c.inc({ status: '500' }, Number.NaN);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });
});
