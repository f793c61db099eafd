import type { CallTransferOutcome } from '../../../core/ports/call-transfer.js';
import type { ScreeningOutcome } from '../../../media/voice/call-start.js';
import type { AnsweringMachineResult, CallEnd, TranscriptLine } from '../calls/call-types.js';
import { callEndFromRun, callSteps, gatewayEndReason, transcriptLines } from '../calls/run-record.js';
import type { RecipeRun, RunResult } from '../recipes/runtime/recipe-run.js';

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

/** What one call left for its record when the handler is done with it. */
export interface CallOutcome {
  readonly answeredAt: Date;
  readonly endedAt: Date;
  /** The call's end as the gateway settled it (undefined: it did not settle in time). */
  readonly end: { readonly reason: string } | undefined;
  /** The run, if one started, and its result, if it finished. */
  readonly run?: RecipeRun;
  readonly result?: RunResult;
  /** The call ended because nothing could understand its language: the line the caller heard. */
  readonly speechEnd?: { readonly reason: 'unsupported_language' | 'speech_unavailable'; readonly line: TranscriptLine };
  /** A machine answered a screened call: what the agent did. */
  readonly voicemail?: ScreeningOutcome;
  readonly answeringMachine?: AnsweringMachineResult;
  /** The handler failed (the message is logged, the record says `error`). */
  readonly failed: boolean;
  readonly recordingRef?: string;
  readonly transfers: readonly CallTransferOutcome[];
}

/**
 * The one CallEnd a recipe call's record gets: from the run's result when it finished (a machine
 * answer recorded as voicemail, the gateway's end reason where it knows better); with the
 * unsupported-language line and no disposition when no speech could be understood; else the path
 * up to where the call stopped the run or the handler failed. Telephony facts (an unACKed 200, an
 * unconfirmed transfer) then override "completed" (recordedEnd), except for a language end.
 */
export function callEndOf(o: CallOutcome): CallEnd {
  const { endedAt, answeredAt, end, run, result, speechEnd, voicemail, recordingRef } = o;
  const extras = { ...(recordingRef ? { recordingRef } : {}), ...(o.answeringMachine ? { answeringMachine: o.answeringMachine } : {}) };
  if (speechEnd) {
    const ran = result ? callEndFromRun(result, { endedAt, answeredAt }) : undefined;
    return {
      endedAt,
      answeredAt,
      outcome: 'completed',
      sipStatus: 200,
      endReason: speechEnd.reason,
      transcript: [...(ran?.transcript ?? []), speechEnd.line],
      ...(ran?.steps ? { steps: ran.steps } : {}),
      ...(ran?.variables ? { variables: ran.variables } : {}),
      ...extras,
    };
  }
  const facts: TelephonyFacts = { endReason: end?.reason, transfers: o.transfers };
  if (result) {
    // The run sees any end of the call as a hang-up; the gateway knows whether a limit, a
    // transfer or the caller ended it.
    const ran = { ...callEndFromRun(result, { endedAt, answeredAt, ...(end ? { callEndReason: end.reason } : {}), ...(recordingRef ? { recordingRef } : {}) }), ...extras };
    // A machine answered: the record says so instead of "the caller hung up".
    const machine = voicemail ? { endReason: 'voicemail', disposition: `voicemail_${voicemail === 'messageLeft' ? 'message_left' : 'disconnected'}` } : {};
    return recordedEnd({ ...ran, ...machine }, facts);
  }
  return recordedEnd(
    {
      endedAt,
      answeredAt,
      outcome: 'completed',
      sipStatus: 200,
      endReason: o.failed ? 'error' : (gatewayEndReason(end?.reason) ?? end?.reason ?? 'error'),
      transcript: transcriptLines(run?.transcript ?? []),
      // The path up to where the call stopped the run (or the handler failed).
      steps: callSteps(run?.steps ?? []),
      ...(run ? { variables: run.variables() } : {}),
      ...extras,
    },
    facts,
  );
}
