import type { Logger } from '../../../../core/logger.js';
import type { CallTransferOutcome } from '../../../../core/ports/call-transfer.js';
import type { OriginateRequest, OriginateResult } from '../../../../core/ports/originator.js';
import { isRefusal, type ProviderCallEntry, type ProviderCalls } from '../provider-calls.js';
import { type PublicUrls } from '../provider-http.js';
import type { ProviderNumber, ProviderNumbers } from '../provider-numbers.js';
import { ProviderApiError } from '../provider-rest.js';
import { dialPromise, dialRefused, guardRing, readyToDial, transferSettled, type ProviderAdapter, type ProviderEndpoint } from '../provider-adapter.js';
import type { StreamCallControl } from '../stream-call.js';
import { accountA } from './account.js';
import { streamProtocolA } from './media-stream.js';
import { StreamEndpoint } from '../stream-endpoint.js';
import type { ProviderARest } from './rest-client.js';
import { connectStreamTwiml, dialTwiml } from './twiml.js';
import { providerAWebhooks, type WebhookHostA } from './webhooks.js';

export interface ProviderAOptions {
  readonly calls: ProviderCalls;
  readonly numbers: ProviderNumbers;
  readonly rest: ProviderARest;
  readonly urls: PublicUrls;
  readonly logger: Logger;
  /** `connected`/`start` must follow the handshake within this long. */
  readonly startTimeoutMs: number;
  /** How long a Transfer block lets the target ring. */
  readonly transferRingSeconds?: number;
  /** A stream may be reconnected this many times per call (a provider looping on a broken endpoint stops). */
  readonly maxReconnects?: number;
}

const prefix = '/providers/a';

/**
 * Provider A (Account SID + Auth Token; the public TwiML / Media Streams / Call resource docs):
 * inbound calls arrive at `POST /providers/a/voice` (set as the number's voice URL at the
 * provider) and are answered with a bidirectional stream to us; campaign calls are created with
 * the REST API, whose status callbacks become the campaign outcomes; transfers replace the call's
 * instructions with a `<Dial>`. Every request and stream handshake is signature-checked with the
 * number's Auth Token.
 */
export class ProviderA implements ProviderEndpoint, ProviderAdapter, WebhookHostA {
  readonly type = 'providerA' as const;
  readonly prefix = prefix;
  readonly router;
  readonly stream: StreamEndpoint;
  /** Calls whose `ringing` was already reported to the campaign (callbacks may repeat). */
  private readonly rang = new WeakSet<ProviderCallEntry>();
  private readonly reconnects = new WeakMap<ProviderCallEntry, number>();

  constructor(private readonly o: ProviderAOptions) {
    this.stream = new StreamEndpoint(streamProtocolA((token) => this.url(token, 'stream', 'ws')), { prefix, calls: o.calls, logger: o.logger, startTimeoutMs: o.startTimeoutMs });
    this.router = providerAWebhooks(this, o);
  }

  /** Our URL for one call: `answer`, `status`, `stream-ended`, `transfer-answered`, `transfer-ended`, or the `stream` (ws). */
  url(token: string, what: string, scheme: 'http' | 'ws' = 'http'): string {
    return `${scheme === 'ws' ? this.o.urls.ws : this.o.urls.http}${prefix}/calls/${token}/${what}`;
  }

  /** The instructions that (re)connect a call's media stream to us. */
  streamTwiml(entry: ProviderCallEntry): string {
    return connectStreamTwiml({ streamUrl: this.url(entry.token, 'stream', 'ws'), actionUrl: this.url(entry.token, 'stream-ended') });
  }

  /** Hangs the call up at the provider (`completed`, or `canceled` before an answer). */
  control(entry: ProviderCallEntry): StreamCallControl {
    return {
      hangup: async () => {
        const account = accountA(entry);
        if (!account || !entry.callSid) return;
        await this.o.rest.endCall(account, entry.callSid, entry.answered ? 'completed' : 'canceled');
      },
    };
  }

  /** Another stream for a call still up (the provider's stream ended under it), unless it reconnected too often. */
  mayReconnect(entry: ProviderCallEntry): boolean {
    const n = (this.reconnects.get(entry) ?? 0) + 1;
    this.reconnects.set(entry, n);
    return n <= (this.o.maxReconnects ?? 5);
  }

  /** Status `ringing` (reported once per call). */
  ringing(entry: ProviderCallEntry): void {
    if (this.rang.has(entry)) return;
    this.rang.add(entry);
    entry.dial?.request.onRinging?.();
  }

  async originate(request: OriginateRequest, number: ProviderNumber): Promise<OriginateResult> {
    const account = accountA(number);
    if (!account) return { outcome: 'failed', reason: `number ${number.e164} is not on provider A` };
    const { dial, result } = dialPromise(request);
    const opened = this.o.calls.open({ provider: 'providerA', number, direction: 'outbound', ours: number.e164, remote: request.to, callSid: undefined, dial }, (entry) => this.control(entry));
    if (isRefusal(opened)) return { outcome: 'failed', reason: opened.reason };
    const call = opened;
    const onAbort = (): void => {
      if (dial.settled) return;
      dial.settle({ outcome: 'failed', reason: 'aborted before an answer' });
      this.o.calls.release(call);
      void this.control(call).hangup().catch((error: unknown) => this.o.logger.warn({ err: String(error), callSid: call.callSid }, 'provider A did not cancel the call'));
    };
    const notDialled = await readyToDial(this.o.calls, call, request);
    if (notDialled) return notDialled;
    request.signal.addEventListener('abort', onAbort, { once: true });
    void result.finally(() => request.signal.removeEventListener('abort', onAbort));
    try {
      const created = await this.o.rest.createCall(account, {
        to: request.to,
        from: number.e164,
        url: this.url(call.token, 'answer'),
        statusCallback: this.url(call.token, 'status'),
        timeoutSeconds: Math.round(request.ringTimeoutMs / 1000),
      });
      call.callSid ??= created.sid;
      // Aborted while the request was under way: the call exists now, so cancel it.
      if (dial.settled && !call.answered) void this.control(call).hangup().catch(() => undefined);
    } catch (error) {
      // A REST refusal has no SIP status; the provider's HTTP status and code are in the reason.
      dialRefused(this.o.calls, call, dial, this.o.logger, error, { retryable: error instanceof ProviderApiError && error.retryable });
      return result;
    }
    guardRing(this.o.calls, call, dial, request, result, this.o.logger, () => void this.control(call).hangup().catch(() => undefined));
    return result;
  }

  /** The campaign outcome of a call that ended without its stream ever starting. */
  unanswered(entry: ProviderCallEntry, status: string, sipStatus: number | undefined): void {
    const dial = entry.dial;
    this.o.calls.release(entry);
    if (!dial || dial.settled) return;
    const sip = sipStatus !== undefined ? { sipStatus } : {};
    if (status === 'busy') dial.settle({ outcome: 'busy', sipStatus: sipStatus ?? 486, reason: 'busy (provider A)' });
    else if (status === 'no-answer') dial.settle({ outcome: 'no-answer', ...sip, reason: 'no answer (provider A)' });
    else if (status === 'canceled') dial.settle({ outcome: 'failed', ...sip, reason: 'canceled' });
    else if (status === 'completed') dial.settle({ outcome: 'failed', ...sip, reason: 'answered, but the media stream never started' });
    else dial.settle({ outcome: 'failed', ...sip, reason: `the provider reported the call ${status}` });
  }

  /**
   * The Transfer block: the provider dials the target and bridges the caller (our stream leaves).
   * Resolves when the target answers (ok) or the dial fails, in which case the caller comes back
   * to the agent on a new stream (the `transfer-ended` answer) and the block takes `failed`.
   */
  async transfer(entry: ProviderCallEntry, target: string, signal: AbortSignal): Promise<CallTransferOutcome> {
    const account = accountA(entry);
    const call = entry.call;
    if (!account || !call || !entry.callSid) return { ok: false, reason: 'the call is not connected' };
    if (entry.transfer) return { ok: false, reason: 'a transfer is already under way' };
    const ringSeconds = this.o.transferRingSeconds ?? 30;
    const outcome = new Promise<{ ok: boolean; reason: string }>((resolve) => {
      entry.transfer = { resolve: (ok, reason) => resolve({ ok, reason }) };
    });
    call.beginTransfer();
    try {
      await this.o.rest.redirect(account, entry.callSid, dialTwiml({ target, callerId: entry.ours, actionUrl: this.url(entry.token, 'transfer-ended'), answeredUrl: this.url(entry.token, 'transfer-answered'), timeoutSeconds: ringSeconds }));
    } catch (error) {
      entry.transfer = undefined;
      call.endTransfer(false);
      return { ok: false, reason: `provider A refused the transfer: ${error instanceof Error ? error.message : String(error)}`, cause: error };
    }
    return transferSettled(entry, call, outcome, signal, (ringSeconds + 30) * 1000);
  }
}
