import type { SipMessage } from '../message/message.js';
import { DEFAULT_TIMERS, NamedTimers, type TimerValues } from './timers.js';
import type { TransactionOptions, TransactionTransport } from './types.js';

/** Timer values per options object: a table's transactions share one instead of a copy each. */
const valuesByOptions = new WeakMap<TransactionOptions, TimerValues>();
function timerValuesOf(options: TransactionOptions): TimerValues {
  let t = valuesByOptions.get(options);
  if (!t) {
    t = { ...DEFAULT_TIMERS, ...options.timers };
    valuesByOptions.set(options, t);
  }
  return t;
}

/** Whoever indexes a transaction (the table) and must forget it when it terminates. */
export interface TransactionRegistry {
  release(key: string, tx: object): void;
}

/** Shared plumbing: timers on the injected clock, guarded sends, one-way termination. */
export abstract class TransactionBase<S extends string> {
  protected readonly timers: NamedTimers;
  protected readonly t: TimerValues;
  private current: S;
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
    this.timers = new NamedTimers(options.clock);
    this.t = timerValuesOf(options);
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
      this.transport.send(msg);
      return true;
    } catch (e) {
      this.onTransportError(e);
      this.terminate();
      return false;
    }
  }

  protected terminate(): void {
    if (this.terminatedState) return;
    this.timers.stopAll();
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
