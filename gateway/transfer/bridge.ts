import type { Logger } from '../../core/logger.js';
import type { CallMediaSession } from '../../core/ports/media.js';

export type RelayDirection = 'caller-to-target' | 'target-to-caller';

/** Frames moved each way by a bridge; the B2BUA's evidence that audio flows. */
export interface BridgeStats {
  callerToTarget: number;
  targetToCaller: number;
  /** Why a direction stopped relaying before the bridge ended (already logged once). */
  failure?: { readonly direction: RelayDirection; readonly cause: unknown };
}

/**
 * Relays decoded audio between two media sessions, 20 ms frames each way, until `signal` aborts
 * or either input ends. Concealed frames are passed on too so the far side's pacing stays even.
 * `onCallerAudio` fires per real caller frame (keeps the call's silence timer from firing).
 * A direction that fails stops; its error is kept in the stats and logged once as a warning
 * (the other direction and the call go on: one-way audio beats a dropped call).
 */
export function relayAudio(caller: CallMediaSession, target: CallMediaSession, signal: AbortSignal, onCallerAudio: () => void, logger: Logger): BridgeStats {
  const stats: BridgeStats = { callerToTarget: 0, targetToCaller: 0 };
  const pump = async (from: CallMediaSession, to: CallMediaSession, count: (real: boolean) => void): Promise<void> => {
    for await (const frame of from.input) {
      if (signal.aborted) return;
      to.output.write(frame.samples);
      count(!frame.concealed);
    }
  };
  const failed = (direction: RelayDirection) => (error: unknown): void => {
    stats.failure ??= { direction, cause: error };
    logger.warn({ err: error, direction }, 'bridge relay failed: this direction carries no more audio');
  };
  void pump(caller, target, (real) => {
    stats.callerToTarget += 1;
    if (real) onCallerAudio();
  }).catch(failed('caller-to-target'));
  void pump(target, caller, () => void (stats.targetToCaller += 1)).catch(failed('target-to-caller'));
  return stats;
}
