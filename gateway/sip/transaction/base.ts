import { timerLane, type LaneEntry, type TimerLane } from '../../../core/clock-lane.js';
import type { SipMessage } from '../message/message.js';
import { DEFAULT_TIMERS, NamedTimers, type TimerValues } from './timers.js';
import type { TransactionOptions, TransactionTransport } from './types.js';

/** What the transactions of one options object (one table) share: timer values and wait lanes. */
interface Shared {
  readonly t: TimerValues;
  readonly options: TransactionOptions;
  readonly lanes: Map<number, TimerLane>;
}

const sharedByOptions = new WeakMap<TransactionOptions, Shared>();
function sharedOf(options: TransactionOptions): Shared {
  let s = sharedByOptions.get(options);
  if (!s) {
    s = { t: { ...DEFAULT_TIMERS, ...options.timers }, options, lanes: new Map() };
    sharedByOptions.set(options, s);
  }
  return s;
}

/** The lane for a wait timer of `ms` on the table's clock (slack only for waits of a second or more). */
function waitLane(shared: Shared, ms: number): TimerLane {
  let lane = shared.lanes.get(ms);
  if (!lane) {
    lane = timerLane(shared.options.clock, ms, ms >= 1000 ? (shared.options.waitSlackMs ?? 0) : 0);
    shared.lanes.set(ms, lane);
  }
  return lane;
}

/** Whoever indexes a transaction (the table) and must forget it when it terminates. */
export interface TransactionRegistry {
  release(key: string, tx: object): void;
}

/** Shared plumbing: timers on the injected clock, guarded sends, one-way termination. */
export abstract class TransactionBase<S extends string> implements LaneEntry {
  /** Made on first use: server transactions of a plain UAS never need one. */
  private named: NamedTimers | undefined;
  protected readonly t: TimerValues;
  private readonly shared: Shared;
  private current: S;
  /** The one lane timer a transaction runs at a time (a wait timer, or 100 Trying). */
  private lane: TimerLane | undefined;
  private laneTicket = 0;
  /**
   * Set by the table that indexes this transaction: on termination it is released before the
   * TU hears of it. A field rather than a wrapping closure per transaction, which the RFC timers
   * (J, L: 64*T1) would otherwise keep alive for 32 s each.
   */
  registry: TransactionRegistry | undefined;
  registryKey = '';

  protected constructor(
    initial: S,
    protected readonly transport: TransactionTransport,
    options: TransactionOptions,
  ) {
    this.current = initial;
    this.shared = sharedOf(options);
    this.t = this.shared.t;
  }

  /** Retransmission and timeout timers (A, B, E, F, G, H, "trying" aside) on the clock. */
  protected get timers(): NamedTimers {
    return (this.named ??= new NamedTimers(this.shared.options.clock));
  }

  get state(): S {
    return this.current;
  }

  protected setState(next: S): void {
    this.current = next;
  }

  protected get terminatedState(): boolean {
    return (this.current as string) === 'terminated';
  }

  /** Sends, turning a transport failure into the transaction's end (RFC 3261 sec. 17.1.4/17.2.4). */
  protected send(msg: SipMessage): boolean {
    try {
      // Only a connection fails after the send returned; a datagram's send has no later failure.
      this.transport.send(msg, this.transport.reliable ? (e) => this.lateFailure(e) : undefined);
      return true;
    } catch (e) {
      this.onTransportError(e);
      this.terminate();
      return false;
    }
  }

  private lateFailure(error: Error): void {
    if (this.terminatedState) return;
    this.onTransportError(error);
    this.terminate();
  }

  /** `send` for octets already serialized (the transport has `sendWire`). */
  protected sendSerialized(wire: Buffer): boolean {
    try {
      this.transport.sendWire?.(wire);
      return true;
    } catch (e) {
      this.onTransportError(e);
      this.terminate();
      return false;
    }
  }

  /**
   * Timers D, I, J, K, L and M only end the transaction when they fire (RFC 3261 sec. 17, RFC
   * 6026 sec. 7): they run on a lane shared by the table, not on a clock timer each.
   */
  protected terminateAfter(ms: number): void {
    this.startLane(waitLane(this.shared, ms));
  }

  protected startLane(lane: TimerLane): void {
    this.stopLane();
    this.lane = lane;
    this.laneTicket = lane.add(this);
  }

  protected stopLane(): void {
    if (this.lane === undefined) return;
    this.lane.cancel(this.laneTicket);
    this.lane = undefined;
  }

  /** The lane timer fired (LaneEntry). */
  expire(): void {
    this.lane = undefined;
    this.laneExpired();
  }

  /** A wait timer ends the transaction; subclasses with another lane timer add theirs. */
  protected laneExpired(): void {
    this.terminate();
  }

  protected terminate(): void {
    if (this.terminatedState) return;
    this.stopLane();
    this.named?.stopAll();
    this.setState('terminated' as S);
    this.registry?.release(this.registryKey, this);
    this.onTerminated();
  }

  /** Timers A, E and G double from T1 (E and G cap at T2) while the transport is unreliable. */
  protected retransmitEvery(name: string, interval: number, cap: number | undefined, resend: () => void): void {
    if (this.transport.reliable) return;
    this.timers.start(name, interval, () => {
      resend();
      if (!this.terminatedState) this.retransmitEvery(name, cap === undefined ? interval * 2 : Math.min(interval * 2, cap), cap, resend);
    });
  }

  protected abstract onTransportError(error: unknown): void;
  protected abstract onTerminated(): void;
}
