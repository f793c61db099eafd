import type { OriginateRequest, OriginateResult, Originator } from '../core/ports/originator.js';

/**
 * The campaign scheduler (worker role) starts before the SIP gateway role, and either may run
 * without the other. The worker dials through this late-bound Originator; the gateway role binds
 * its SIP Originator when it is up and unbinds it when it stops. Unbound, every attempt fails
 * with 503 so messages follow the campaign's retry policy instead of waiting silently.
 */
export class LateBoundOriginator implements Originator {
  private target: Originator | undefined;

  get bound(): boolean {
    return this.target !== undefined;
  }

  /** Returns the unbind function. */
  bind(originator: Originator): () => void {
    this.target = originator;
    return () => {
      if (this.target === originator) this.target = undefined;
    };
  }

  async originate(request: OriginateRequest): Promise<OriginateResult> {
    if (!this.target) return { outcome: 'failed', sipStatus: 503, reason: 'no SIP gateway role runs in this process' };
    return this.target.originate(request);
  }
}

/** The process-wide instance the roles share (bin/roles/worker.ts and bin/roles/gateway.ts). */
export const processOriginator = new LateBoundOriginator();
