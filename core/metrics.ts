import { Registry, collectDefaultMetrics, Counter, Gauge, Histogram } from 'prom-client';
import { packageVersion } from './package-version.js';

/**
 * One Prometheus registry per process. Parts register their own metrics on it with the helpers
 * below, so names stay consistent (`vap_` prefix) and tests can read values back.
 */
export const metricsRegistry = new Registry();

let processMetrics = false;

/**
 * prom-client's process and Node.js metrics under their standard names (`process_cpu_seconds_total`,
 * `nodejs_heap_size_total_bytes`, ...), so stock dashboards and alerts find them. Started by whoever
 * serves /metrics (ops-routes.ts) or runs the platform, not on import: the collectors run an
 * event-loop-delay monitor and a GC observer, which a bare import of the SIP stack (a bench's plain
 * UAS) should not pay for.
 */
export function collectProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics({ register: metricsRegistry });
  // prom-client serves these three sums as gauges named *_total, which `promtool check metrics`
  // rejects (only counters end in _total). The same figures stay by type in nodejs_active_handles,
  // nodejs_active_requests and nodejs_active_resources: sum() them.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) metricsRegistry.removeSingleMetric(name);
  // The usual build-info gauge: always 1, the version in its label, so a dashboard can show which
  // release each instance runs and join it onto other series.
  gauge('build_info', 'The platform\'s version (package.json) as a label; always 1', ['version']).set({ version: packageVersion() }, 1);
}

export function counter(name: string, help: string, labelNames: readonly string[] = []): Counter<string> {
  const existing = metricsRegistry.getSingleMetric(`vap_${name}`);
  if (existing) return existing as Counter<string>;
  return new Counter({ name: `vap_${name}`, help, labelNames: [...labelNames], registers: [metricsRegistry] });
}

export function gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge<string> {
  const existing = metricsRegistry.getSingleMetric(`vap_${name}`);
  if (existing) return existing as Gauge<string>;
  return new Gauge({ name: `vap_${name}`, help, labelNames: [...labelNames], registers: [metricsRegistry] });
}

export function histogram(
  name: string,
  help: string,
  labelNames: readonly string[] = [],
  buckets?: readonly number[],
): Histogram<string> {
  const existing = metricsRegistry.getSingleMetric(`vap_${name}`);
  if (existing) return existing as Histogram<string>;
  return new Histogram({
    name: `vap_${name}`,
    help,
    labelNames: [...labelNames],
    registers: [metricsRegistry],
    ...(buckets ? { buckets: [...buckets] } : {}),
  });
}

/** One label set's count. The hot path adds to `value`: a field write, nothing else. */
export interface CounterCell {
  value: number;
}

export interface CellCounter {
  /** The cell of one label set (values in `labelNames` order), made on first use: look it up once and keep it. */
  cell(...labelValues: string[]): CounterCell;
}

const cellCounters = new Map<string, CellCounter>();

/**
 * A counter for paths that run per SIP message. prom-client's `counter.labels(...).inc()` hashes
 * the label object into a string on every call; here a caller keeps the cell of its label set and
 * increments a number, and the values are copied into the prom-client counter only when scraped.
 */
export function cellCounter(name: string, help: string, labelNames: readonly string[] = []): CellCounter {
  const known = cellCounters.get(name);
  if (known) return known;
  const cells = new Map<string, { readonly labels: Record<string, string>; readonly cell: CounterCell }>();
  new Counter({
    name: `vap_${name}`,
    help,
    labelNames: [...labelNames],
    registers: [metricsRegistry],
    collect() {
      this.reset();
      for (const { labels, cell } of cells.values()) this.inc(labels, cell.value);
    },
  });
  const made: CellCounter = {
    cell(...labelValues) {
      const key = labelValues.join('\u0000');
      let entry = cells.get(key);
      if (!entry) {
        const labels: Record<string, string> = {};
        labelNames.forEach((n, i) => (labels[n] = labelValues[i] ?? ''));
        entry = { labels, cell: { value: 0 } };
        cells.set(key, entry);
      }
      return entry.cell;
    },
  };
  cellCounters.set(name, made);
  return made;
}

/** Label values and the value of one series, as a sampled metric reports it at scrape time. */
export type Sample = readonly [labels: Readonly<Record<string, string>>, value: number];
export type Sampler = () => Iterable<Sample> | Promise<Iterable<Sample>>;

/**
 * A gauge read at scrape time (live calls by tenant, backlog from the store): nothing runs between
 * scrapes. Samples with the same labels are added up; a label set that is no longer sampled
 * disappears from the output.
 */
export function sampledGauge(name: string, help: string, labelNames: readonly string[], sample: Sampler): Gauge<string> {
  return sampled(Gauge, name, help, labelNames, sample);
}

/** A counter whose running total is read at scrape time from what already counts it (RTP session stats). */
export function sampledCounter(name: string, help: string, labelNames: readonly string[], sample: Sampler): Counter<string> {
  return sampled(Counter, name, help, labelNames, sample);
}

/** A metric whose values are the sampler's at each scrape; registered once (a second call returns the first). */
function sampled<M extends Gauge<string> | Counter<string>>(
  Metric: new (config: { name: string; help: string; labelNames: string[]; registers: Registry[]; collect(this: M): Promise<void> }) => M,
  name: string,
  help: string,
  labelNames: readonly string[],
  sample: Sampler,
): M {
  const existing = metricsRegistry.getSingleMetric(`vap_${name}`);
  if (existing) return existing as M;
  return new Metric({
    name: `vap_${name}`,
    help,
    labelNames: [...labelNames],
    registers: [metricsRegistry],
    async collect() {
      const samples = await sample();
      this.reset();
      for (const [labels, value] of samples) this.inc({ ...labels }, value);
    },
  });
}
