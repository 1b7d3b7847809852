/**
 * A counter and a histogram for the metrics every request touches (the request count and
 * duration, 402s, upstream exchanges), registered in the app's prom-client registry and
 * exposed exactly as prom-client's own Counter and Histogram expose them: the same names,
 * series order, label order, values and text (hot-metrics.test.ts compares the two).
 *
 * Why not prom-client's: each of its `inc`/`observe` calls validates the label names, builds
 * and sorts a hash string of the labels and, in a histogram, looks the bucket up by its
 * bound turned into a string: 0.3–0.5 µs a call, four calls a forwarded request (issue 14,
 * docs/performance.md). Here a series is found through one Map per label, keyed by the
 * label's value, and its labels are checked once, when the series is made. Label values
 * are strings: a number would make a series of its own (`String(status)`, not `status`).
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
    let node = this.#tree;
    const last = names.length - 1;
    for (let i = 0; i < last; i++) {
      const v = labels[names[i]!];
      let next = node.get(v) as Tree<S> | undefined;
      if (next === undefined) {
        next = new Map();
        node.set(v, next);
      }
      node = next;
    }
    const key = last < 0 ? undefined : labels[names[last]!];
    let s = node.get(key) as S | undefined;
    if (s === undefined) {
      s = this.create(this.checked(labels));
      node.set(key, s);
      this.series.push(s);
    }
    return s;
  }

  /** The labels of a new series, as prom-client would accept them (else its errors). */
  private checked(labels: Labels<L>): Labels<L> {
    const out: Labels<L> = {};
    for (const k in labels) {
      const v = labels[k];
      if (!this.labelNames.includes(k)) {
        throw new Error(
          `Added label "${k}" is not included in initial labelset: ${JSON.stringify(this.labelNames)}`,
        );
      }
      if (v !== undefined && typeof v !== 'string')
        throw new TypeError(`label "${k}" of ${this.name} must be a string, got ${typeof v}`);
      out[k] = v;
    }
    return out;
  }

  reset(): void {
    this.#tree = new Map();
    this.series = [];
  }
}

export class HotCounter<L extends string> extends HotMetric<L, { labels: Labels<L>; value: number }> {
  readonly type = 'counter' as const;

  protected create(labels: Labels<L>) {
    return { value: 0, labels };
  }

  inc(labels: Labels<L>, value = 1): void {
    if (!(value >= 0) || value === Number.POSITIVE_INFINITY)
      throw new Error(`It is not possible to increase a counter by ${value}`);
    this.find(labels).value += value;
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
