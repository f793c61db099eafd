import type { CallMediaSession } from '../../core/ports/media.js';

/** Frames moved each way by a bridge; the B2BUA's evidence that audio flows. */
export interface BridgeStats {
  callerToTarget: number;
  targetToCaller: number;
}

/**
 * Relays decoded audio between two media sessions, 20 ms frames each way, until `signal` aborts
 * or either input ends. Concealed frames are passed on too so the far side's pacing stays even.
 * `onCallerAudio` fires per real caller frame (keeps the call's silence timer from firing).
 */
export function relayAudio(caller: CallMediaSession, target: CallMediaSession, signal: AbortSignal, onCallerAudio: () => void): BridgeStats {
  const stats: BridgeStats = { callerToTarget: 0, targetToCaller: 0 };
  const pump = async (from: CallMediaSession, to: CallMediaSession, count: (real: boolean) => void): Promise<void> => {
    for await (const frame of from.input) {
      if (signal.aborted) return;
      to.output.write(frame.samples);
      count(!frame.concealed);
    }
  };
  void pump(caller, target, (real) => {
    stats.callerToTarget += 1;
    if (real) onCallerAudio();
  }).catch(() => undefined);
  void pump(target, caller, () => void (stats.targetToCaller += 1)).catch(() => undefined);
  return stats;
}
