import type Router from '@koa/router';
import type { CallTransferOutcome } from '../../../core/ports/call-transfer.js';
import type { OriginateRequest, OriginateResult } from '../../../core/ports/originator.js';
import { errorMessage } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import type { StreamCall } from './stream-call.js';
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

/** The provider would not place the call: its slot is freed and the dial fails with the provider's words. */
export function dialRefused(calls: ProviderCalls, call: ProviderCallEntry, dial: PendingDial, logger: Logger, error: unknown, fields: Record<string, unknown> = {}): void {
  calls.release(call);
  logger.warn({ err: errorMessage(error), number: call.number.e164, ...fields }, `${call.provider} did not place the call`);
  dial.settle({ outcome: 'failed', reason: errorMessage(error), cause: error });
}

/**
 * A dial the provider never reports on: after the ring time and 15 s more it fails as no-answer,
 * its slot freed (`cancel` hangs it up where the provider can). The provider's own ring timeout
 * normally decides first; this covers a lost callback.
 */
export function guardRing(calls: ProviderCalls, call: ProviderCallEntry, dial: PendingDial, request: OriginateRequest, result: Promise<OriginateResult>, logger: Logger, cancel?: () => void): void {
  const guard = setTimeout(() => {
    if (dial.settled || call.answered) return;
    logger.warn({ callSid: call.callSid }, `${call.provider} reported no outcome after the ring time: giving the dial up`);
    dial.settle({ outcome: 'no-answer', reason: 'no status from the provider within the ring time' });
    calls.release(call);
    cancel?.();
  }, request.ringTimeoutMs + 15_000);
  void result.finally(() => clearTimeout(guard));
}

/**
 * The end of a provider transfer under way: what the provider reports (`outcome`), or no report
 * within `unconfirmedAfterMs` (the call is then hung up: nobody knows where the caller is), or the
 * call ending. The AI's limits apply again from here (endTransfer).
 */
export async function transferSettled(entry: ProviderCallEntry, call: StreamCall, outcome: Promise<{ ok: boolean; reason: string }>, signal: AbortSignal, unconfirmedAfterMs: number): Promise<CallTransferOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const unconfirmed = new Promise<{ ok: boolean; reason: string; unconfirmed: true }>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, reason: 'the provider never reported how the transfer went', unconfirmed: true }), unconfirmedAfterMs);
  });
  const aborted = new Promise<{ ok: boolean; reason: string }>((resolve) => signal.addEventListener('abort', () => resolve({ ok: false, reason: 'the call ended during the transfer' }), { once: true }));
  const result = await Promise.race([outcome, unconfirmed, aborted]);
  clearTimeout(timer);
  entry.transfer = undefined;
  call.endTransfer(result.ok);
  if (result.ok) return { ok: true, method: 'provider' };
  if ('unconfirmed' in result) void call.hangup('transfer-unconfirmed');
  return { ok: false, reason: result.reason, ...('unconfirmed' in result ? { unconfirmed: true } : {}) };
}
