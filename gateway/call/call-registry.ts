import type { Call } from './call.js';
import { countAnsweredCall } from './call-outcomes.js';

export type CallDirection = 'inbound' | 'outbound';

/**
 * Live calls, counted per tenant and per number for the concurrency limits, with the call
 * handlers still running for them (a handler writes the call record after the hang-up, so a
 * drain waits for it too).
 */
export class CallRegistry {
  private readonly calls = new Map<string, Call>();
  private readonly outbound = new Set<string>();
  private readonly perTenant = new Map<string, number>();
  private readonly perNumber = new Map<string, number>();
  private readonly handlers = new Set<Promise<unknown>>();
  private idleWaiters: Array<() => void> = [];
  /** INVITEs being set up: they count against limits before they become calls. */
  private pendingCount = 0;

  get size(): number {
    return this.calls.size;
  }

  get inProgress(): number {
    return this.calls.size + this.pendingCount;
  }

  /** Nothing up, nothing being set up, no handler still finishing a call. */
  get idle(): boolean {
    return this.calls.size === 0 && this.pendingCount === 0 && this.handlers.size === 0;
  }

  tenantCount(tenantId: string): number {
    return this.perTenant.get(tenantId) ?? 0;
  }

  numberCount(numberId: string): number {
    return this.perNumber.get(numberId) ?? 0;
  }

  /** Reserves a slot for a call being set up; the returned function releases it. */
  reserve(tenantId: string, numberId: string): () => void {
    bump(this.perTenant, tenantId, 1);
    bump(this.perNumber, numberId, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      bump(this.perTenant, tenantId, -1);
      bump(this.perNumber, numberId, -1);
    };
  }

  pending(delta: 1 | -1): void {
    this.pendingCount += delta;
    if (delta < 0) this.checkIdle();
  }

  add(call: Call, release: () => void, direction: CallDirection = 'inbound'): void {
    this.calls.set(call.info.id, call);
    if (direction === 'outbound') this.outbound.add(call.info.id);
    void call.ended.then((end) => countAnsweredCall(call.info.channel === 'web' ? 'web' : direction, end.reason, end.durationMs));
    call.signal.addEventListener('abort', () => {
      this.calls.delete(call.info.id);
      this.outbound.delete(call.info.id);
      release();
      this.checkIdle();
    });
  }

  /** Keeps a call's handler in view until it settles (drain waits for it). */
  track(handler: Promise<unknown>): void {
    this.handlers.add(handler);
    const done = (): void => {
      this.handlers.delete(handler);
      this.checkIdle();
    };
    handler.then(done, done);
  }

  get(id: string): Call | undefined {
    return this.calls.get(id);
  }

  all(): IterableIterator<Call> {
    return this.calls.values();
  }

  directionOf(call: Call): CallDirection {
    return this.outbound.has(call.info.id) ? 'outbound' : 'inbound';
  }

  /** Resolves once the registry is idle (at once when it already is). */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private checkIdle(): void {
    if (!this.idle || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}

function bump(map: Map<string, number>, key: string, delta: number): void {
  const n = (map.get(key) ?? 0) + delta;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}
