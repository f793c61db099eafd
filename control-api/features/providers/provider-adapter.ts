import type { CallTransferOutcome } from '../../../core/ports/call-transfer.js';
import type { OriginateRequest, OriginateResult } from '../../../core/ports/originator.js';
import type { PendingDial, ProviderCallEntry } from './provider-calls.js';
import type { CloudProviderType, ProviderNumber } from './provider-numbers.js';

/** What each cloud provider implements on top of the shared call registry (provider-calls.ts). */
export interface ProviderAdapter {
  readonly type: CloudProviderType;
  /** Places a campaign call from `number` through the provider's REST API; resolves with its outcome. */
  originate(request: OriginateRequest, number: ProviderNumber): Promise<OriginateResult>;
  /** The Transfer block on a call of this provider. */
  transfer(entry: ProviderCallEntry, target: string, signal: AbortSignal): Promise<CallTransferOutcome>;
  /** Closes the provider's media stream sockets (shutdown, after the calls were hung up). */
  close(): void;
}

/** A dial's outcome as a promise, settled once by whichever event decides it first. */
export function dialPromise(request: OriginateRequest): { dial: PendingDial; result: Promise<OriginateResult> } {
  let resolve!: (r: OriginateResult) => void;
  const result = new Promise<OriginateResult>((r) => (resolve = r));
  let settled = false;
  const dial: PendingDial = {
    request,
    get settled() {
      return settled;
    },
    settle(r) {
      if (settled) return;
      settled = true;
      resolve(r);
    },
  };
  return { dial, result };
}
