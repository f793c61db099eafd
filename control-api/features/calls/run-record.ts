import type { RunResult } from '../recipes/runtime/recipe-run.js';
import type { TranscriptEntry } from '../recipes/runtime/run-events.js';
import type { CallEnd, CallStep, TranscriptLine } from './call-types.js';

/**
 * Maps a finished RecipeRun to the end of its call record: transcript (with Smart Interruption
 * cuts), disposition of the Close block, why the run ended and the final variables. The voice
 * pipeline, the campaign dialer and the simulator all end a call this way.
 */
export function transcriptLines(entries: readonly TranscriptEntry[]): TranscriptLine[] {
  return entries.map((e) => ({
    at: e.at,
    speaker: e.speaker,
    text: e.text,
    blockId: e.blockId,
    ...(e.dtmf ? { dtmf: true } : {}),
    ...(e.interrupted ? { interrupted: true, ...(e.unspoken ? { unspoken: e.unspoken } : {}) } : {}),
    ...(e.ignored ? { ignored: e.ignored } : {}),
  }));
}

/**
 * The run's path as stored and as served, field for field with no absent optional keys: each
 * turn note loses the block id its step already names (a RunStep is a CallStep with that extra).
 */
export function callSteps(steps: readonly CallStep[]): CallStep[] {
  return steps.map((s) => ({
    blockId: s.blockId,
    type: s.type,
    ...(s.exit !== undefined ? { exit: s.exit } : {}),
    ...(s.end !== undefined ? { end: s.end } : {}),
    turns: s.turns.map((t) => ({
      kind: t.kind,
      ...(t.reason !== undefined ? { reason: t.reason } : {}),
      ...(t.heard !== undefined ? { heard: t.heard } : {}),
      ...(t.confidence !== undefined ? { confidence: t.confidence } : {}),
    })),
  }));
}

/**
 * Call ends the gateway decides, by the gateway's completion reason (`gateway/call/call.ts`,
 * session timer), and the end reason the record shows. A recipe run only sees its signal abort
 * and reports `callerHangup`; the record must say the platform ended the call, and why.
 */
const gatewayEnds: Readonly<Record<string, string>> = {
  'caller-silence': 'silenceTimeout', // phone number: End Call on Silence
  'max-duration': 'maxDuration', // phone number: Max call duration with AI
  'media-timeout': 'mediaTimeout', // no RTP from the caller (media timeout policy)
  'session-expired': 'sessionExpired', // RFC 4028 sec. 10: no session refresh in time
  'session-refresh-failed': 'sessionExpired',
  // A REFER transfer hangs our leg up before the Transfer block returns (a provider's <Dial> too).
  transferred: 'transferred',
  // A drain (SIGTERM, POST /v1/admin/drain) that outlasted drainTimeoutMs, or a stop without one.
  'drain-timeout': 'drainTimeout',
  shutdown: 'shutdown',
  // Calls carried by a cloud provider's media stream (control-api/features/providers/stream-call.ts):
  'stream-error': 'streamError', // the provider sent a frame its protocol does not allow
  'stream-lost': 'streamLost', // the stream dropped and was not reconnected in time
  // Provider B: the transfer target did not answer and the provider's flow ended the call
  // instead of bringing the caller back to the agent (providers/provider-b/transfers-b.ts).
  'transfer-failed': 'transferFailed',
};

/** The record's end reason for a call the gateway reports as ended with `callEndReason`. */
export function gatewayEndReason(callEndReason: string | undefined): string | undefined {
  return callEndReason === undefined ? undefined : gatewayEnds[callEndReason];
}

/** A run that ended because the call did (`callerHangup`) takes the gateway's reason when it ended the call. */
export function recordedEndReason(runReason: string, callEndReason: string | undefined): string {
  return runReason === 'callerHangup' ? (gatewayEndReason(callEndReason) ?? runReason) : runReason;
}

export function callEndFromRun(
  result: RunResult,
  timing: {
    readonly endedAt: Date;
    readonly answeredAt?: Date;
    readonly sipStatus?: number;
    readonly recordingRef?: string;
    /** The gateway's completion reason of the call, when it settled. */
    readonly callEndReason?: string;
  },
): CallEnd {
  return {
    endedAt: timing.endedAt,
    outcome: 'completed',
    ...(timing.answeredAt ? { answeredAt: timing.answeredAt } : {}),
    sipStatus: timing.sipStatus ?? 200,
    endReason: recordedEndReason(result.reason, timing.callEndReason),
    ...(result.disposition ? { disposition: result.disposition } : {}),
    variables: result.variables,
    transcript: transcriptLines(result.transcript),
    steps: callSteps(result.steps),
    ...(timing.recordingRef ? { recordingRef: timing.recordingRef } : {}),
  };
}
