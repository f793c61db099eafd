import { counter, histogram, sampledGauge } from '../../../core/metrics.js';
import type { RecogniserLoad } from './protocol.js';

/** The pools of this process (one in production: the shared offline recogniser; tests start their own). */
export const livePools = new Set<{ load(): RecogniserLoad }>();

const sum = (pick: (l: RecogniserLoad) => number): number => [...livePools].reduce((n, p) => n + pick(p.load()), 0);

/** The offline recogniser's metrics (docs/operations.md). */
export const recogniserMetrics = {
  queueDepth: sampledGauge('recogniser_queue_depth', 'Offline recogniser: utterances waiting for a free decoder worker', [], () => [[{}, sum((l) => l.queued)]]),
  busy: sampledGauge('recogniser_busy_workers', 'Offline recogniser: decoder workers decoding an utterance now', [], () => [[{}, sum((l) => l.busy)]]),
  decodeSeconds: histogram(
    'recogniser_decode_seconds',
    'Offline recogniser: time a worker spent on one decode (grammar switch and search)',
    [],
    [0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 2, 5],
  ),
  waitSeconds: histogram('recogniser_wait_seconds', 'Offline recogniser: time an utterance waited for a free worker', [], [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5]),
  earlyReadings: counter(
    'recogniser_early_readings_total',
    'Offline recogniser: caller turns by whether their early decoding (started in the endpointer\'s silence) was used, dropped because speech came back, or never started',
    ['outcome'],
  ),
  restarts: counter('recogniser_worker_restarts_total', 'Offline recogniser: workers started again after dying (crash, crash-in-decode) or being killed (timeout)', ['reason']),
};
