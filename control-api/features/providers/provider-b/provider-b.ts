import Router from '@koa/router';
import type Koa from 'koa';
import getRawBody from 'raw-body';
import { AppError } from '../../../../core/errors.js';
import type { Logger } from '../../../../core/logger.js';
import type { CallTransferOutcome } from '../../../../core/ports/call-transfer.js';
import type { OriginateRequest, OriginateResult } from '../../../../core/ports/originator.js';
import { dialPromise, dialRefused, guardRing, readyToDial, type ProviderAdapter, type ProviderEndpoint } from '../provider-adapter.js';
import { isRefusal, type ProviderCallEntry, type ProviderCalls } from '../provider-calls.js';
import { readForm, webhookBodyLimitBytes, type FormPairs, type PublicUrls } from '../provider-http.js';
import type { ProviderNumber, ProviderNumbers } from '../provider-numbers.js';
import type { StreamCallControl } from '../stream-call.js';
import { accountB, validBasicAuthB } from './account.js';
import { streamProtocolB } from './media-stream.js';
import { StreamEndpoint } from '../stream-endpoint.js';
import type { ProviderBRest } from './rest-client.js';
import { TransfersB } from './transfers-b.js';

export interface ProviderBOptions {
  readonly calls: ProviderCalls;
  readonly numbers: ProviderNumbers;
  readonly rest: ProviderBRest;
  readonly urls: PublicUrls;
  readonly logger: Logger;
  readonly startTimeoutMs: number;
  /** How long a Transfer block lets the target ring. */
  readonly transferRingSeconds?: number;
}

const prefix = '/providers/b';
const terminal = new Set(['completed', 'busy', 'no-answer', 'failed', 'canceled']);

/**
 * Provider B (Account SID, API Key, API Token, Outbound App Id, Sub Domain; its public AgentStream
 * docs: Voicebot applet, WebSocket protocol, Calls/connect, status callbacks; its flow applets:
 * Connect with a dynamic URL, Passthru). The number's flow at the provider starts with a Voicebot
 * applet whose URL is our endpoint `GET /providers/b/voicebot`, which answers with the stream URL
 * of the call; the Connect and Passthru applets after it carry transfers (transfers-b.ts).
 * Inbound calls are found by `CallTo`, campaign calls by the `CustomField` we gave the REST call.
 * The provider authenticates with HTTP Basic auth (API key and token), not a body signature.
 */
export class ProviderB implements ProviderEndpoint, ProviderAdapter {
  readonly type = 'providerB' as const;
  readonly prefix = prefix;
  readonly router = new Router({ prefix });
  readonly stream: StreamEndpoint;
  private readonly transfers: TransfersB;
  private readonly rang = new WeakSet<ProviderCallEntry>();

  constructor(private readonly o: ProviderBOptions) {
    this.stream = new StreamEndpoint(streamProtocolB, { prefix, calls: o.calls, logger: o.logger, startTimeoutMs: o.startTimeoutMs });
    // B's flow moves on at once when a step ends; the stream-start deadline bounds each step.
    this.transfers = new TransfersB({ calls: o.calls, logger: o.logger, flowStepMs: o.startTimeoutMs, ...(o.transferRingSeconds ? { ringSeconds: o.transferRingSeconds } : {}) });
    this.router.get('/voicebot', (ctx) => this.voicebot(ctx));
    this.router.post('/calls/:token/status', (ctx) => this.status(ctx));
    this.transfers.routes(this.router);
  }

  url(token: string, what: 'status' | 'stream'): string {
    return `${what === 'stream' ? this.o.urls.ws : this.o.urls.http}${prefix}/calls/${token}/${what}`;
  }

  /**
   * B's calls are ended by their flow: closing our stream moves the call on to the Connect applet,
   * which we tell to dial nobody, and so to the flow's Hangup applet (the docs give no REST
   * hang-up for a call in a Voicebot applet), so there is nothing to ask.
   */
  control(): StreamCallControl {
    return { hangup: async () => undefined };
  }

  /**
   * The Voicebot applet asks where to stream this call (query: CallSid, CallFrom, CallTo,
   * Direction, CustomField). A campaign call is found by the token in CustomField; a call we
   * already hold by its CallSid (the flow's second Voicebot applet after a failed transfer).
   */
  private async voicebot(ctx: Koa.Context): Promise<void> {
    const q = ctx.query;
    const one = (name: string): string | undefined => (typeof q[name] === 'string' && q[name] !== '' ? (q[name] as string) : undefined);
    const callSid = one('CallSid');
    if (!callSid) throw new AppError('invalid_argument', 'the request is missing CallSid', { issues: [{ path: 'CallSid', message: 'CallSid is required' }] });
    const token = one('CustomField');
    const known = (token ? this.o.calls.get(token) : undefined) ?? this.o.calls.byProviderCallSid('providerB', callSid);
    if (known) {
      const account = accountB(known);
      if (!account || !validBasicAuthB(account, ctx.get('Authorization') || undefined)) throw this.refused(ctx);
      if (known.callSid && known.callSid !== callSid) throw new AppError('permission_denied', 'CallSid is not the call this token was given to');
      known.callSid ??= callSid;
      if (known.call) this.transfers.callerBack(known);
      else this.o.calls.markAnswered(known);
      ctx.body = { url: this.url(known.token, 'stream') };
      return;
    }
    const ended = accountB(this.o.calls.recentlyEndedByCallSid('providerB', callSid));
    if (ended) {
      // A call that ended here must not start over as a new one.
      if (!validBasicAuthB(ended, ctx.get('Authorization') || undefined)) throw this.refused(ctx);
      throw new AppError('not_found', 'the call has ended');
    }
    const to = one('CallTo') ?? one('To');
    const from = one('CallFrom') ?? one('From');
    if (!to || !from) throw new AppError('invalid_argument', 'the request is missing CallTo or CallFrom');
    const number = await this.o.numbers.byE164('providerB', to);
    const account = accountB(number);
    if (!number || !account) throw new AppError('not_found', `number ${to} is not provisioned on provider B`);
    if (!validBasicAuthB(account, ctx.get('Authorization') || undefined)) throw this.refused(ctx);
    if (!number.enabled) throw new AppError('failed_precondition', `number ${number.e164} is disabled`);
    const opened = this.o.calls.open({ provider: 'providerB', number, direction: 'inbound', ours: number.e164, remote: from, callSid, dial: undefined }, () => this.control());
    if (isRefusal(opened)) throw new AppError('resource_exhausted', opened.reason);
    ctx.body = { url: this.url(opened.token, 'stream') };
  }

  /** Status callbacks carry no signature: the token in the URL and the matching CallSid stand for it. */
  private async status(ctx: Koa.Context): Promise<void> {
    const token = String(ctx.params.token);
    const entry = this.o.calls.get(token);
    if (!accountB(entry) && !accountB(this.o.calls.recentlyEnded(token))) throw new AppError('not_found', 'no such call');
    const form = await readFormOrJson(ctx);
    const get = (name: string): string | undefined => form.find(([k]) => k === name)?.[1];
    ctx.status = 204;
    if (!entry) return;
    if (entry.callSid && get('CallSid') !== entry.callSid) throw new AppError('permission_denied', 'CallSid is not this call');
    const status = get('Status') ?? get('CallStatus') ?? '';
    const event = get('EventType') ?? '';
    if (status === 'ringing' || event === 'ringing') {
      if (!this.rang.has(entry)) entry.dial?.request.onRinging?.();
      this.rang.add(entry);
    } else if (status === 'in-progress' || event === 'answered') this.o.calls.markAnswered(entry);
    else if (terminal.has(status)) {
      if (entry.call) {
        if (!this.transfers.callEnded(entry)) entry.call.providerEnded('remote-bye');
      } else this.unanswered(entry, status);
    }
  }

  private unanswered(entry: ProviderCallEntry, status: string): void {
    const dial = entry.dial;
    this.o.calls.release(entry);
    if (!dial || dial.settled) return;
    // B reports no SIP status; busy is recorded as 486 Busy Here, the status it stands for.
    if (status === 'busy') dial.settle({ outcome: 'busy', sipStatus: 486, reason: 'busy (provider B)' });
    else if (status === 'no-answer') dial.settle({ outcome: 'no-answer', reason: 'no answer (provider B)' });
    else if (status === 'completed') dial.settle({ outcome: 'failed', reason: 'answered, but the media stream never started' });
    else dial.settle({ outcome: 'failed', reason: `the provider reported the call ${status}` });
  }

  private refused(ctx: Koa.Context): AppError {
    this.o.logger.warn({ provider: 'providerB', path: ctx.path }, 'request refused: wrong or missing basic auth');
    return new AppError('permission_denied', 'the API key and token do not match');
  }

  async originate(request: OriginateRequest, number: ProviderNumber): Promise<OriginateResult> {
    const account = accountB(number);
    if (!account) return { outcome: 'failed', reason: `number ${number.e164} is not on provider B` };
    const { dial, result } = dialPromise(request);
    const call = this.o.calls.open({ provider: 'providerB', number, direction: 'outbound', ours: number.e164, remote: request.to, callSid: undefined, dial }, () => this.control());
    if (isRefusal(call)) return { outcome: 'failed', reason: call.reason };
    const notDialled = await readyToDial(this.o.calls, call, request);
    if (notDialled) return notDialled;
    // The docs give no way to cancel a ringing call: an abort only stops waiting for it.
    const onAbort = (): void => dial.settle({ outcome: 'failed', reason: 'aborted before an answer' });
    request.signal.addEventListener('abort', onAbort, { once: true });
    void result.finally(() => request.signal.removeEventListener('abort', onAbort));
    try {
      call.callSid ??= (await this.o.rest.connect(account, { to: request.to, from: number.e164, statusCallback: this.url(call.token, 'status'), timeoutSeconds: Math.round(request.ringTimeoutMs / 1000), customField: call.token })).sid;
    } catch (error) {
      dialRefused(this.o.calls, call, dial, this.o.logger, error);
      return result;
    }
    guardRing(this.o.calls, call, dial, request, result, this.o.logger);
    return result;
  }

  /** The Transfer block: our stream closes and the flow's Connect applet dials the target (transfers-b.ts). */
  transfer(entry: ProviderCallEntry, target: string, signal: AbortSignal): Promise<CallTransferOutcome> {
    return this.transfers.transfer(entry, target, signal);
  }
}

/** Provider B posts status callbacks as a form or as JSON. */
async function readFormOrJson(ctx: Koa.Context): Promise<FormPairs> {
  if (!ctx.is('application/json')) return readForm(ctx);
  const text = await getRawBody(ctx.req, { limit: webhookBodyLimitBytes, encoding: 'utf8' }).catch(() => {
    throw new AppError('malformed', 'could not read the callback body');
  });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AppError('malformed', 'the callback body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AppError('invalid_argument', 'the callback body must be a JSON object');
  return Object.entries(body).filter(([, v]) => typeof v === 'string' || typeof v === 'number').map(([k, v]) => [k, String(v)]);
}
