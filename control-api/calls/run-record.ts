import type { RunResult } from '../recipes/runtime/recipe-run.js';
import type { TranscriptEntry } from '../recipes/runtime/run-events.js';
import type { CallEnd, TranscriptLine } from './call-types.js';

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
  }));
}

export function callEndFromRun(
  result: RunResult,
  timing: { readonly endedAt: Date; readonly answeredAt?: Date; readonly sipStatus?: number; readonly recordingRef?: string },
): CallEnd {
  return {
    endedAt: timing.endedAt,
    outcome: 'completed',
    ...(timing.answeredAt ? { answeredAt: timing.answeredAt } : {}),
    sipStatus: timing.sipStatus ?? 200,
    endReason: result.reason,
    ...(result.disposition ? { disposition: result.disposition } : {}),
    variables: result.variables,
    transcript: transcriptLines(result.transcript),
    ...(timing.recordingRef ? { recordingRef: timing.recordingRef } : {}),
  };
}
