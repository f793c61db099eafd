import type { CallTransferOutcome } from '../../../core/ports/call-transfer.js';
import type { CallEnd } from '../calls/call-types.js';

/** What the gateway knows of a call that the recipe run's result does not say. */
export interface TelephonyFacts {
  /** Why the gateway ended the call (`Call.ended` reason: remote-bye, ack-timeout, transferred, ...). */
  readonly endReason: string | undefined;
  /** The outcomes of the Transfer blocks the call ran, in order. */
  readonly transfers: readonly CallTransferOutcome[];
}

/*
 * End reasons the record gets when the telephony side contradicts "completed" (camelCase like the
 * run's and the gateway limits' end reasons, calls/run-record.ts):
 * - `ackTimeout`: our 2xx to the caller never got its ACK (RFC 3261 sec. 13.3.1.4: after 64*T1 we
 *   sent BYE), so the call was never established, whatever the recipe did meanwhile;
 * - `transferNotAcked`: the same, on a call the recipe transferred (a bridge to a caller who never
 *   confirmed the call);
 * - `transferUnconfirmed`: the peer accepted our REFER but never reported how it ended (no final
 *   NOTIFY, RFC 3515 sec. 2.4.5): nobody knows whether the caller reached the target.
 */

/**
 * The call's end as recorded: `end` (from the run) unless the telephony facts say the call or its
 * transfer was never confirmed, in which case the outcome is `failed` with one of
 * the end reasons above instead of `completed`.
 */
export function recordedEnd(end: CallEnd, facts: TelephonyFacts): CallEnd {
  const transferred = facts.transfers.length > 0 || end.endReason === 'transferred';
  if (facts.endReason === 'ack-timeout') return { ...end, outcome: 'failed', endReason: transferred ? 'transferNotAcked' : 'ackTimeout' };
  const last = facts.transfers[facts.transfers.length - 1];
  if (last && !last.ok && last.unconfirmed === true) return { ...end, outcome: 'failed', endReason: 'transferUnconfirmed' };
  return end;
}
