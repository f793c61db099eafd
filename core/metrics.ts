import { Registry, collectDefaultMetrics, Counter, Gauge, Histogram } from 'prom-client';

/**
 * One Prometheus registry per process. Parts register their own metrics on it with the helpers
 * below, so names stay consistent (`vap_` prefix) and tests can read values back.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'vap_process_' });

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
