import { metricsRegistry } from '../../core/metrics.js';

/**
 * One series of the process's registry as Prometheus would scrape it: the metric `name`, the
 * series whose labels include `labels`, and for a histogram `series` = `<name>_count` (or `_sum`).
 * 0 when there is no such series yet.
 */
export async function metricValue(name: string, labels: Readonly<Record<string, string>> = {}, series = name): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric(name)?.get();
  const hit = metric?.values.find((v) => ((v as { metricName?: string }).metricName ?? name) === series && Object.entries(labels).every(([k, l]) => String(v.labels[k]) === l));
  return hit?.value ?? 0;
}
