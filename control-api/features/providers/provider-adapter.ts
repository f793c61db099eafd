import type Router from '@koa/router';
import type { CallTransferOutcome } from '../../../core/ports/call-transfer.js';
import type { OriginateRequest, OriginateResult } from '../../../core/ports/originator.js';
import { errorMessage } from '../../../core/errors.js';
import type { PendingDial, ProviderCallEntry, ProviderCalls } from './provider-calls.js';
import type { CloudProviderType, ProviderNumber } from './provider-numbers.js';
import type { StreamEndpoint } from './stream-endpoint.js';

/** One provider's share of the provider listener: its webhook routes and its media stream upgrades. */
export interface ProviderEndpoint {
  /** `/providers/a`: every route and stream path of the provider starts with it. */
  readonly prefix: string;
  /** Its webhook routes, mounted with `routes()` and `allowedMethods()`. */
  readonly router: Router;
  /** Its media stream endpoint: WebSocket upgrades under the prefix, closed at shutdown. */
  readonly stream: StreamEndpoint;
}

/** What each cloud provider implements on top of the shared call registry (provider-calls.ts). */
export interface ProviderAdapter {
  readonly type: CloudProviderType;
  /** Places a campaign call from `number` through the provider's REST API; resolves with its outcome. */
  originate(request: OriginateRequest, number: ProviderNumber): Promise<OriginateResult>;
  /** The Transfer block on a call of this provider. */
  transfer(entry: ProviderCallEntry, target: string, signal: AbortSignal): Promise<CallTransferOutcome>;
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

/**
 * What every provider's dial does before it asks the provider's REST API: the campaign's last
 * check (`beforeInvite`), then an abort that came meanwhile. Either one releases the call's slot
 * and is the dial's outcome; undefined means go ahead.
 */
export async function readyToDial(calls: ProviderCalls, call: ProviderCallEntry, request: OriginateRequest): Promise<OriginateResult | undefined> {
  try {
    await request.beforeInvite?.();
  } catch (error) {
    calls.release(call);
    return { outcome: 'failed', reason: `not dialled: ${errorMessage(error)}` };
  }
  if (request.signal.aborted) {
    calls.release(call);
    return { outcome: 'failed', reason: 'aborted before an answer' };
  }
  return undefined;
}
