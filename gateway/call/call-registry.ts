import type { Call } from './call.js';

/** Live calls, counted per tenant and per number for the concurrency limits. */
export class CallRegistry {
  private readonly calls = new Map<string, Call>();
  private readonly perTenant = new Map<string, number>();
  private readonly perNumber = new Map<string, number>();
  /** INVITEs being set up: they count against limits before they become calls. */
  private pendingCount = 0;

  get size(): number {
    return this.calls.size;
  }

  get inProgress(): number {
    return this.calls.size + this.pendingCount;
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
  }

  add(call: Call, release: () => void): void {
    this.calls.set(call.info.id, call);
    call.signal.addEventListener('abort', () => {
      this.calls.delete(call.info.id);
      release();
    });
  }

  get(id: string): Call | undefined {
    return this.calls.get(id);
  }

  all(): IterableIterator<Call> {
    return this.calls.values();
  }
}

function bump(map: Map<string, number>, key: string, delta: number): void {
  const n = (map.get(key) ?? 0) + delta;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}
