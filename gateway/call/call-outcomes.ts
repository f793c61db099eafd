import { counter, histogram } from '../../core/metrics.js';

/** Where a call came from or went: a trunk or provider inbound, our origination, a browser. */
export type CallMetricDirection = 'inbound' | 'outbound' | 'web';

/**
 * End reasons the platform itself gives (Call, StreamCall, the handlers): anything else counts as
 * `other`, so no caller of `hangup(reason)` can grow the label set.
 */
const knownEndReasons = new Set([
  'remote-bye', 'local-bye', 'max-duration', 'media-timeout', 'caller-silence', 'no-sdp-answer', 'session-expired', 'session-refresh-failed',
  'handler-error', 'shutdown', 'drain-timeout', 'transferred', 'transfer-target-bye', 'transfer-unconfirmed', 'agent-closed', 'aborted',
  'stream-lost', 'stream-error', 'cancelled', 'ack-timeout', 'transport-error', 'test-hangup',
]);

const callsTotal = counter(
  'calls_total',
  'Calls by direction (inbound from trunks and providers, outbound, web from browsers), outcome (answered, rejected, cancelled, busy, no-answer, failed) and end reason (answered calls: who or what ended them; the others: the final SIP status)',
  ['direction', 'outcome', 'end_reason'],
);
const callDuration = histogram(
  'call_duration_seconds',
  'Answered calls, from the answer to the hang-up, by direction',
  ['direction'],
  [5, 15, 30, 60, 120, 180, 300, 600, 900, 1200, 1800, 3600],
);

/** An answered call ended: counted once, with its duration. Observed once per call, never per message. */
export function countAnsweredCall(direction: CallMetricDirection, reason: string, durationMs: number): void {
  callsTotal.labels(direction, 'answered', knownEndReasons.has(reason) ? reason : 'other').inc();
  callDuration.labels(direction).observe(Math.max(0, durationMs) / 1000);
}

/** A call that never got answered: the final status says why (0: none was received, e.g. aborted before the INVITE). */
export function countUnansweredCall(direction: CallMetricDirection, outcome: 'rejected' | 'cancelled' | 'busy' | 'no-answer' | 'failed', status: number): void {
  callsTotal.labels(direction, outcome, status >= 100 && status <= 699 ? String(status) : 'none').inc();
}
