import { countShed } from '../sip-metrics.js';
import { FairQueue } from './fair-queue.js';
import type { Flow, Reply } from './types.js';

/** Where an admitted datagram waits (ReceiveGate.screen decides). */
export const Lane = {
  /** Responses, ACKs, requests of live dialogs, OPTIONS, other non-INVITE requests: read first. */
  Priority: 1,
  /** Behind the priority lane, per source: CANCELs (after their INVITE) and heads the peek could not read. */
  Calls: 2,
  /** A new INVITE: in the Calls lane, counted against the node's capacity while it waits, refused when it waits too long. */
  NewCall: 3,
} as const;
export type Lane = (typeof Lane)[keyof typeof Lane];

/** What the intake needs of its gate (receive-gate.ts ReceiveGate). */
export interface LaneOwner {
  /** The lane a datagram waits in, or undefined when it was dropped or refused. */
  screen(buf: Buffer, flow: Flow, reply: Reply): Lane | undefined;
  /** A new INVITE that waited too long: refused (503) or dropped. */
  refuseStale(buf: Buffer, flow: Flow, reply: Reply): void;
  forget(intake: DatagramIntake): void;
  /** New INVITEs waiting over every intake of the gate: they count against the node's capacity. */
  waitingCalls: number;
}

interface Arrival {
  readonly buf: Buffer;
  readonly flow: Flow;
  readonly reply: Reply;
  /** When it arrived (monotonic ms); only new INVITEs are timed. */
  readonly at: number;
  readonly newCall: boolean;
}

export interface IntakeLimits {
  readonly perSource: number;
  readonly turnBudget: number;
  readonly priorityLimit: number;
  readonly maxWaitMs: number;
  readonly now: () => number;
}

/** Priority messages handed on per round at most, so the socket is read again soon even under a burst of them. */
const PRIORITY_PER_ROUND = 256;
const PRIORITY_FULL = 'priority queue full';
const SOURCE_FULL = 'source queue full';

/**
 * One datagram transport's way in. Each datagram is screened at once (ReceiveGate.screen: a peek,
 * no parse) and waits in its lane; the parse and everything after it run in rounds, one per turn
 * of the event loop (setImmediate), so the socket is read between rounds and the kernel's buffer
 * does not fill behind a burst. A round hands on the priority lane first (up to 256 messages, in
 * arrival order), then one FairQueue round of the new-call lane (`turnBudget` per source): a BYE,
 * an ACK, a response or an OPTIONS waits for at most the rest of one round, never for the new
 * INVITEs queued before it. A new INVITE that has waited more than `maxWaitMs` is answered 503
 * instead of parsed: its caller has retransmitted or given up, and the node is behind.
 */
export class DatagramIntake {
  private priority: Arrival[] = [];
  private priorityHead = 0;
  private readonly calls: FairQueue<Arrival>;
  private scheduled = false;
  private stopped = false;

  constructor(
    private readonly gate: LaneOwner,
    private readonly deliver: (buf: Buffer, flow: Flow) => void,
    private readonly limits: IntakeLimits,
  ) {
    this.calls = new FairQueue<Arrival>(limits);
  }

  get waitingPriority(): number {
    return this.priority.length - this.priorityHead;
  }

  get waitingCalls(): number {
    return this.calls.waiting;
  }

  receive(buf: Buffer, flow: Flow, reply: Reply): void {
    if (this.stopped) return;
    const lane = this.gate.screen(buf, flow, reply);
    if (lane === undefined) return;
    if (lane === Lane.Priority) {
      if (this.waitingPriority >= this.limits.priorityLimit) {
        countShed('dropped', PRIORITY_FULL);
        return;
      }
      this.priority.push({ buf, flow, reply, at: 0, newCall: false });
    } else {
      const newCall = lane === Lane.NewCall;
      if (!this.calls.push(flow.remote.address, { buf, flow, reply, at: newCall ? this.limits.now() : 0, newCall })) {
        countShed('dropped', SOURCE_FULL);
        return;
      }
      if (newCall) this.countNewCall(1);
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.round);
    }
  }

  stop(): void {
    this.stopped = true;
    this.priority = [];
    this.priorityHead = 0;
    this.calls.clear((a) => {
      if (a.newCall) this.countNewCall(-1);
    });
    this.gate.forget(this);
  }

  private countNewCall(delta: 1 | -1): void {
    this.gate.waitingCalls += delta;
  }

  private readonly round = (): void => {
    this.scheduled = false;
    if (this.stopped) return;
    const end = Math.min(this.priority.length, this.priorityHead + PRIORITY_PER_ROUND);
    while (this.priorityHead < end) {
      const a = this.priority[this.priorityHead] as Arrival;
      this.priority[this.priorityHead++] = undefined as unknown as Arrival;
      this.deliver(a.buf, a.flow);
    }
    if (this.priorityHead >= this.priority.length) {
      this.priority = [];
      this.priorityHead = 0;
    }
    this.calls.round(this.handOn);
    if ((this.waitingPriority > 0 || this.calls.waiting > 0) && !this.scheduled && !this.stopped) {
      this.scheduled = true;
      setImmediate(this.round);
    }
  };

  private readonly handOn = (a: Arrival): void => {
    if (a.newCall) {
      // No longer waiting: once delivered, the call counts as being set up (CallRegistry) instead.
      this.countNewCall(-1);
      if (this.limits.maxWaitMs > 0 && this.limits.now() - a.at > this.limits.maxWaitMs) {
        this.gate.refuseStale(a.buf, a.flow, a.reply);
        return;
      }
    }
    this.deliver(a.buf, a.flow);
  };
}
