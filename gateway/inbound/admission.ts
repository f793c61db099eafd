import type { Clock } from '../../core/clock.js';
import type { CallRegistry } from '../call/call-registry.js';
import { ReceiveGate } from '../sip/transport/receive-gate.js';
import type { SipStack } from '../sip/ua/sip-stack.js';
import { AbuseGuard, type AbuseGuardOptions } from './abuse-guard.js';
import { CallCapacity, type CallCapacityLimits } from './call-capacity.js';
import type { EdgeSources } from './edge-source.js';
import { LoopLagMonitor } from './loop-lag.js';

/** Admission by the node's capacity (docs/sip-stack.md "Admission by capacity"); each limit is off when absent. */
export interface AdmissionOptions extends CallCapacityLimits {
  /** The event loop's mean delay, ms; absent: a LoopLagMonitor of this gateway (when maxEventLoopLagMs is set). */
  readonly loopLagMs?: () => number;
  /** Utterances waiting for the recogniser (the recogniser pool's hook, once it exists). */
  readonly recogniserQueueDepth?: () => number;
}

export interface ReceiveQueueOptions {
  /** New-call lane messages waiting per source, and handed on per source and round (FairQueue). */
  readonly perSource?: number;
  readonly turnBudget?: number;
  /** A new INVITE that waited longer than this to be read is refused 503 (absent: never). */
  readonly maxWaitMs?: number;
}

export interface AdmissionParts {
  readonly guard: AbuseGuard;
  readonly gate: ReceiveGate;
  /** The gateway's own lag monitor, to stop with it (absent when injected or not needed). */
  readonly lag: LoopLagMonitor | undefined;
  readonly loopLagMs: (() => number) | undefined;
}

/**
 * Wires what decides before the parse: the per-source AbuseGuard, the node's CallCapacity (calls
 * in progress counted with the new INVITEs still waiting in the receive lanes) and the ReceiveGate
 * that applies both to every datagram and framed message.
 */
export function buildAdmission(o: {
  readonly clock: Clock;
  readonly stack: SipStack;
  readonly registry: CallRegistry;
  readonly edge: EdgeSources;
  readonly abuse?: Omit<AbuseGuardOptions, 'clock' | 'concurrentCalls' | 'liveDialog' | 'capacity' | 'retransmission'>;
  readonly admission?: AdmissionOptions;
  readonly receiveQueue?: ReceiveQueueOptions;
}): AdmissionParts {
  const a = o.admission;
  const lag = a?.maxEventLoopLagMs !== undefined && !a.loopLagMs ? new LoopLagMonitor().start() : undefined;
  const loopLagMs = a?.loopLagMs ?? (lag ? () => lag.lagMs() : undefined);
  // The gate is made after the guard it consults; the capacity reads its waiting count late.
  const waiting: { gate?: ReceiveGate } = {};
  const capacity = a
    ? new CallCapacity({
        ...a,
        clock: o.clock,
        callsInProgress: () => o.registry.inProgress + (waiting.gate?.waitingCalls ?? 0),
        ...(loopLagMs ? { loopLagMs } : {}),
      })
    : undefined;
  const edge = o.edge;
  const guard = new AbuseGuard({
    ...o.abuse,
    ...(edge.enabled ? { admissionKey: (source: string, header: (key: string) => string | undefined) => edge.admissionKey(source, header) } : {}),
    clock: o.clock,
    concurrentCalls: () => o.registry.inProgress,
    liveDialog: (callId) => o.stack.dialogs.hasCallId(callId),
    retransmission: (req) => req.topVia !== undefined && o.stack.isRetransmission(req.topVia, req.method),
    ...(capacity ? { capacity } : {}),
  });
  const q = o.receiveQueue;
  const gate = new ReceiveGate({
    policy: guard,
    retryAfterSeconds: guard.retryAfterSeconds,
    server: o.stack.userAgent,
    ...(q?.perSource !== undefined ? { queuePerSource: q.perSource } : {}),
    ...(q?.turnBudget !== undefined ? { turnBudget: q.turnBudget } : {}),
    ...(q?.maxWaitMs !== undefined ? { maxWaitMs: q.maxWaitMs } : {}),
  });
  waiting.gate = gate;
  return { guard, gate, lag, loopLagMs };
}
