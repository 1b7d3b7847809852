/**
 * A counter and a histogram for the metrics every request or paid request touches (the
 * request count and duration, 402s, upstream exchanges, payments and settlement steps; see
 * metrics.ts), registered in the app's prom-client registry and
 * exposed exactly as prom-client's own Counter and Histogram expose them: the same names,
 * series order, label order, values and text (hot-metrics.test.ts compares the two).
 *
 * Why not prom-client's: each of its `inc`/`observe` calls validates the label names, builds
 * and sorts a hash string of the labels and, in a histogram, looks the bucket up by its
 * bound turned into a string: 0.3–0.5 µs a call, four calls a forwarded request (issue 14,
 * docs/performance.md). Here a series is found through one Map per label, keyed by the
 * label's value; the label names are checked on every call, as prom-client does. Anything
 * prom-client accepts is counted as it counts it, anything it refuses is refused the same
 * way (hot-metrics.test.ts): a call on a request's path must not throw where it did not.
 */
import type { Registry } from 'prom-client';

type Labels<L extends string> = Partial<Record<L, string>>;

interface Options<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: Registry[];
}

/** Each label's value leads to the next label's Map; the last one's to the series. */
type Tree<S> = Map<string | undefined, Tree<S> | S>;

/** What prom-client's registry reads of a metric (Registry.getMetricsAsString, getMetricsAsJSON). */
interface Exposed {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
}

abstract class HotMetric<L extends string, S extends { labels: Labels<L> }> implements Exposed {
  readonly name: string;
  readonly help: string;
  abstract readonly type: 'counter' | 'histogram';
  readonly aggregator = 'sum' as const;
  readonly labelNames: readonly L[];
  #tree: Tree<S> = new Map();
  /** Every series in the order it was made (prom-client's order too). */
  protected series: S[] = [];

  constructor(o: Options<L>) {
    this.name = o.name;
    this.help = o.help;
    this.labelNames = o.labelNames;
    // The registry takes any object with prom-client's metric shape; its types name prom-client's classes.
    for (const r of o.registers) r.registerMetric(this as never);
  }

  protected abstract create(labels: Labels<L>): S;

  protected find(labels: Labels<L>): S {
    const names = this.labelNames;
    // As prom-client, on every call: a label the metric does not have is refused.
    for (const k in labels) {
      if (!names.includes(k as L))
        throw new Error(`Added label "${k}" is not included in initial labelset: ${JSON.stringify(names)}`);
    }
    let node = this.#tree;
    const last = names.length - 1;
    for (let i = 0; i < last; i++) {
      const v = keyOf(labels[names[i]!]);
      let next = node.get(v) as Tree<S> | undefined;
      if (next === undefined) {
        next = new Map();
        node.set(v, next);
      }
      node = next;
    }
    const key = last < 0 ? undefined : keyOf(labels[names[last]!]);
    let s = node.get(key) as S | undefined;
    if (s === undefined) {
      // The labels as given, as prom-client keeps them (a number stays a number in get()).
      s = this.create({ ...labels });
      node.set(key, s);
      this.series.push(s);
    }
    return s;
  }

  reset(): void {
    this.#tree = new Map();
    this.series = [];
    this.zeroUnlabelled();
  }

  /** A metric without labels shows its one series from the start, at 0 (as prom-client's). */
  protected zeroUnlabelled(): void {
    if (this.labelNames.length === 0) this.find({});
  }
}

/** A label value as the key of its series: prom-client writes every value as text, so 402 and '402' are one series. */
function keyOf(v: string | undefined): string | undefined {
  return typeof v === 'string' || v === undefined ? v : String(v);
}

export class HotCounter<L extends string> extends HotMetric<L, { labels: Labels<L>; value: number }> {
  readonly type = 'counter' as const;

  constructor(o: Options<L>) {
    super(o);
    this.zeroUnlabelled();
  }

  protected create(labels: Labels<L>) {
    return { value: 0, labels };
  }

  /** prom-client's rules: a non-finite amount is refused (NaN slips through, as there), a negative one too, none counts 1. */
  inc(labels: Labels<L>, value?: number | null): void {
    if (value && !Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    if ((value as number) < 0) throw new Error('It is not possible to decrease a counter');
    this.find(labels).value += value === null || value === undefined ? 1 : value;
  }

  async get() {
    return {
      help: this.help,
      name: this.name,
      type: this.type,
      values: this.series.map((s) => ({ value: s.value, labels: s.labels })),
      aggregator: this.aggregator,
    };
  }
}

interface HistogramSeries<L extends string> {
  labels: Labels<L>;
  /** Observations per bucket, not cumulative; the last one is above every bound (+Inf only). */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class HotHistogram<L extends string> extends HotMetric<L, HistogramSeries<L>> {
  readonly type = 'histogram' as const;
  readonly upperBounds: readonly number[];

  constructor(o: Options<L> & { buckets: readonly number[] }) {
    super(o);
    this.upperBounds = [...o.buckets].sort((a, b) => a - b);
    this.zeroUnlabelled();
  }

  protected create(labels: Labels<L>): HistogramSeries<L> {
    return { labels, counts: new Float64Array(this.upperBounds.length + 1), sum: 0, count: 0 };
  }

  observe(labels: Labels<L>, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const s = this.find(labels);
    const bounds = this.upperBounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    s.counts[i]! += 1;
    s.sum += value;
    s.count += 1;
  }

  /** prom-client's layout: per series its buckets (cumulative, `le` first), +Inf, _sum and _count. */
  async getForPromString() {
    const bucket = `${this.name}_bucket`;
    const values: {
      labels: Record<string, string | number>;
      sharedLabels: Labels<L>;
      value: number;
      metricName: string;
      exemplar: null | undefined;
    }[] = [];
    for (const s of this.series) {
      let acc = 0;
      for (let i = 0; i < this.upperBounds.length; i++) {
        acc += s.counts[i]!;
        values.push({
          labels: { le: this.upperBounds[i]! },
          sharedLabels: s.labels,
          value: acc,
          metricName: bucket,
          exemplar: null,
        });
      }
      values.push(
        {
          labels: { le: '+Inf' },
          sharedLabels: s.labels,
          value: s.count,
          metricName: bucket,
          exemplar: null,
        },
        {
          labels: {},
          sharedLabels: s.labels,
          value: s.sum,
          metricName: `${this.name}_sum`,
          exemplar: undefined,
        },
        {
          labels: {},
          sharedLabels: s.labels,
          value: s.count,
          metricName: `${this.name}_count`,
          exemplar: undefined,
        },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** As prom-client's get(): the series' labels put in with each value's own. */
  async get() {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...rest }) => ({
        ...rest,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }
}
