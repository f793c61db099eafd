import Router from '@koa/router';
import type Koa from 'koa';
import { AppError } from '../../../../core/errors.js';
import type { Logger } from '../../../../core/logger.js';
import type { CallTransferOutcome } from '../../../../core/ports/call-transfer.js';
import type { OriginateRequest, OriginateResult } from '../../../../core/ports/originator.js';
import { dialPromise, dialRefused, guardRing, readyToDial, transferSettled, type ProviderAdapter, type ProviderEndpoint } from '../provider-adapter.js';
import { isRefusal, type ProviderCallEntry, type ProviderCalls } from '../provider-calls.js';
import { field, readForm, requireFields, xml, type FormPairs, type PublicUrls } from '../provider-http.js';
import type { CloudAccount, ProviderNumber, ProviderNumbers } from '../provider-numbers.js';
import type { StreamCallControl } from '../stream-call.js';
import { accountC, nonceHeaderC, signatureHeaderC, validSignatureC } from './account.js';
import { streamProtocolC } from './media-stream.js';
import { StreamEndpoint } from '../stream-endpoint.js';
import type { ProviderCRest } from './rest-client.js';

export interface ProviderCOptions {
  readonly calls: ProviderCalls;
  readonly numbers: ProviderNumbers;
  readonly rest: ProviderCRest;
  readonly urls: PublicUrls;
  readonly logger: Logger;
  readonly startTimeoutMs: number;
}

const prefix = '/providers/c';
const escapeXml = (v: string): string => v.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] as string);

/**
 * Provider C (API Token, API Key, Plan Id, Plan Name, Sound Id), on the XML-and-stream protocol
 * of its public docs: the number's answer URL is `POST /providers/c/answer`, answered with
 * `<Stream bidirectional="true" keepCallAlive="true">wss://...</Stream>`; campaign calls are made
 * with `POST /v1/Account/{API Key}/Call/` whose answer, ring and hangup URLs are ours; every
 * request is signed V2 with the API Token; transfers move the call to a `<Dial>` of ours. How the
 * spec's credentials map onto it, and what is a guess: docs/providers.md.
 */
export class ProviderC implements ProviderEndpoint, ProviderAdapter {
  readonly type = 'providerC' as const;
  readonly prefix = prefix;
  readonly router = new Router({ prefix });
  readonly stream: StreamEndpoint;
  /** The provider's id of a campaign call before it is answered (to cancel it). */
  private readonly requests = new WeakMap<ProviderCallEntry, string>();
  private readonly rang = new WeakSet<ProviderCallEntry>();
  /** Where a transfer in flight goes (the instructions are fetched from our transfer URL). */
  private readonly targets = new WeakMap<ProviderCallEntry, string>();

  constructor(private readonly o: ProviderCOptions) {
    this.stream = new StreamEndpoint(streamProtocolC, { prefix, calls: o.calls, logger: o.logger, startTimeoutMs: o.startTimeoutMs });
    this.router.post('/answer', (ctx) => this.inbound(ctx));
    this.router.post('/calls/:token/answer', (ctx) => this.answered(ctx));
    this.router.post('/calls/:token/ring', (ctx) => this.ring(ctx));
    this.router.post('/calls/:token/hangup', (ctx) => this.hungUp(ctx));
    this.router.post('/calls/:token/transfer', (ctx) => this.transferXml(ctx));
    this.router.post('/calls/:token/transfer-answered', (ctx) => this.transferAnswered(ctx));
    this.router.post('/calls/:token/transfer-ended', (ctx) => this.transferEnded(ctx));
  }

  url(token: string, what: 'answer' | 'ring' | 'hangup' | 'stream' | 'transfer' | 'transfer-answered' | 'transfer-ended'): string {
    return `${what === 'stream' ? this.o.urls.ws : this.o.urls.http}${prefix}/calls/${token}/${what}`;
  }

  control(entry: ProviderCallEntry): StreamCallControl {
    return {
      hangup: async () => {
        const account = accountC(entry);
        if (!account) return;
        if (entry.callSid && entry.answered) await this.o.rest.end(account, { callUuid: entry.callSid });
        else if (this.requests.has(entry)) await this.o.rest.end(account, { requestUuid: this.requests.get(entry) as string });
      },
    };
  }

  private streamXml(entry: ProviderCallEntry): string {
    return `<?xml version="1.0" encoding="UTF-8"?><Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000">${escapeXml(this.url(entry.token, 'stream'))}</Stream></Response>`;
  }

  private async signedForm(ctx: Koa.Context, account: CloudAccount<'providerC'>): Promise<FormPairs> {
    const form = await readForm(ctx);
    if (!validSignatureC(account.apiToken, ctx.get(signatureHeaderC) || undefined, ctx.get(nonceHeaderC) || undefined, this.o.urls.requested(ctx.originalUrl))) {
      this.o.logger.warn({ provider: 'providerC', path: ctx.path }, 'webhook refused: signature does not match');
      throw new AppError('permission_denied', 'the request signature does not match');
    }
    return form;
  }

  private callOf(ctx: Koa.Context): { entry?: ProviderCallEntry; account: CloudAccount<'providerC'> } {
    const token = String(ctx.params.token);
    const entry = this.o.calls.get(token);
    const account = accountC(entry) ?? accountC(this.o.calls.recentlyEnded(token));
    if (!account) throw new AppError('not_found', 'no such call');
    return entry && accountC(entry) ? { entry, account } : { account };
  }

  private async inbound(ctx: Koa.Context): Promise<void> {
    const form = await readForm(ctx);
    const { To, From, CallUUID } = requireFields(form, ['To', 'From', 'CallUUID']);
    const number = await this.o.numbers.byE164('providerC', To);
    const account = accountC(number);
    if (!number || !account) throw new AppError('not_found', `number ${To} is not provisioned on provider C`);
    if (!validSignatureC(account.apiToken, ctx.get(signatureHeaderC) || undefined, ctx.get(nonceHeaderC) || undefined, this.o.urls.requested(ctx.originalUrl))) {
      throw new AppError('permission_denied', 'the request signature does not match');
    }
    if (!number.enabled) return xml(ctx, '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup reason="rejected"/></Response>');
    const opened = this.o.calls.open({ provider: 'providerC', number, direction: 'inbound', ours: number.e164, remote: From, callSid: CallUUID, dial: undefined }, (entry) => this.control(entry));
    if (isRefusal(opened)) return xml(ctx, '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup reason="busy"/></Response>');
    xml(ctx, this.streamXml(opened));
  }

  private async answered(ctx: Koa.Context): Promise<void> {
    const { entry, account } = this.callOf(ctx);
    const form = await this.signedForm(ctx, account);
    if (!entry || entry.dial?.settled) return xml(ctx, '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>');
    entry.callSid ??= field(form, 'CallUUID');
    this.o.calls.markAnswered(entry);
    xml(ctx, this.streamXml(entry));
  }

  private async ring(ctx: Koa.Context): Promise<void> {
    const { entry, account } = this.callOf(ctx);
    await this.signedForm(ctx, account);
    ctx.status = 204;
    if (!entry || this.rang.has(entry)) return;
    this.rang.add(entry);
    entry.dial?.request.onRinging?.();
  }

  /** The call ended: `CallStatus` completed / busy / no-answer / timeout / failed / cancel. */
  private async hungUp(ctx: Koa.Context): Promise<void> {
    const { entry, account } = this.callOf(ctx);
    const form = await this.signedForm(ctx, account);
    ctx.status = 204;
    if (!entry) return;
    if (entry.call) return entry.call.providerEnded('remote-bye');
    const status = field(form, 'CallStatus') ?? 'failed';
    const dial = entry.dial;
    this.o.calls.release(entry);
    if (!dial || dial.settled) return;
    const cause = field(form, 'HangupCauseName');
    const reason = `${status}${cause ? ` (${cause})` : ''} (provider C)`;
    // C reports hang-up causes, not SIP statuses: busy is recorded as 486 Busy Here.
    if (status === 'busy') dial.settle({ outcome: 'busy', sipStatus: 486, reason });
    else if (status === 'no-answer' || status === 'timeout') dial.settle({ outcome: 'no-answer', reason });
    else if (status === 'completed') dial.settle({ outcome: 'failed', reason: 'answered, but the media stream never started' });
    else dial.settle({ outcome: 'failed', reason });
  }

  async originate(request: OriginateRequest, number: ProviderNumber): Promise<OriginateResult> {
    const account = accountC(number);
    if (!account) return { outcome: 'failed', reason: `number ${number.e164} is not on provider C` };
    const { dial, result } = dialPromise(request);
    const call = this.o.calls.open({ provider: 'providerC', number, direction: 'outbound', ours: number.e164, remote: request.to, callSid: undefined, dial }, (entry) => this.control(entry));
    if (isRefusal(call)) return { outcome: 'failed', reason: call.reason };
    const notDialled = await readyToDial(this.o.calls, call, request);
    if (notDialled) return notDialled;
    const onAbort = (): void => {
      if (dial.settled) return;
      dial.settle({ outcome: 'failed', reason: 'aborted before an answer' });
      void this.control(call).hangup().catch(() => undefined);
      this.o.calls.release(call);
    };
    request.signal.addEventListener('abort', onAbort, { once: true });
    void result.finally(() => request.signal.removeEventListener('abort', onAbort));
    try {
      const created = await this.o.rest.createCall(account, { to: request.to, from: number.e164, answerUrl: this.url(call.token, 'answer'), ringUrl: this.url(call.token, 'ring'), hangupUrl: this.url(call.token, 'hangup'), ringTimeoutSeconds: Math.round(request.ringTimeoutMs / 1000) });
      this.requests.set(call, created.requestUuid);
      // Aborted while the request was under way: the call exists now, so cancel it.
      if (dial.settled && !call.answered) void this.control(call).hangup().catch(() => undefined);
    } catch (error) {
      dialRefused(this.o.calls, call, dial, this.o.logger, error);
      return result;
    }
    guardRing(this.o.calls, call, dial, request, result, this.o.logger, () => void this.control(call).hangup().catch(() => undefined));
    return result;
  }

  /**
   * The Transfer block: the call is moved to our transfer instructions (`<Dial>` to the target,
   * with a callback when the target answers and an action when the dial ends). A failed dial
   * brings the caller back to the agent on a new stream; the block then takes `failed`.
   */
  async transfer(entry: ProviderCallEntry, target: string, signal: AbortSignal): Promise<CallTransferOutcome> {
    const account = accountC(entry);
    const call = entry.call;
    if (!account || !call || !entry.callSid) return { ok: false, reason: 'the call is not connected' };
    if (entry.transfer) return { ok: false, reason: 'a transfer is already under way' };
    const outcome = new Promise<{ ok: boolean; reason: string }>((resolve) => (entry.transfer = { resolve: (ok, reason) => resolve({ ok, reason }) }));
    this.targets.set(entry, target);
    call.beginTransfer();
    try {
      await this.o.rest.transfer(account, entry.callSid, this.url(entry.token, 'transfer'));
    } catch (error) {
      entry.transfer = undefined;
      call.endTransfer(false);
      return { ok: false, reason: `provider C refused the transfer: ${error instanceof Error ? error.message : String(error)}`, cause: error };
    }
    return transferSettled(entry, call, outcome, signal, 60_000);
  }

  /** The call, moved by our transfer request, asks for its instructions: dial the target. */
  private async transferXml(ctx: Koa.Context): Promise<void> {
    const { entry, account } = this.callOf(ctx);
    await this.signedForm(ctx, account);
    const target = entry && this.targets.get(entry);
    if (!entry?.transfer || !target) return xml(ctx, '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>');
    const noun = /^sips?:/i.test(target) ? `<User>${escapeXml(target)}</User>` : `<Number>${escapeXml(target)}</Number>`;
    xml(ctx, `<?xml version="1.0" encoding="UTF-8"?><Response><Dial action="${escapeXml(this.url(entry.token, 'transfer-ended'))}" method="POST" callbackUrl="${escapeXml(this.url(entry.token, 'transfer-answered'))}" callbackMethod="POST" callerId="${escapeXml(entry.ours)}" timeout="30">${noun}</Dial></Response>`);
  }

  /** The dial's callback: `DialAction=answer` when the target picks up. */
  private async transferAnswered(ctx: Koa.Context): Promise<void> {
    const { entry, account } = this.callOf(ctx);
    const form = await this.signedForm(ctx, account);
    if (field(form, 'DialAction') === 'answer') entry?.transfer?.resolve(true, 'the target answered');
    ctx.status = 204;
  }

  /** The dial ended (`DialStatus`): bridged and over, or failed and the caller returns to the agent. */
  private async transferEnded(ctx: Koa.Context): Promise<void> {
    const { entry, account } = this.callOf(ctx);
    const form = await this.signedForm(ctx, account);
    const status = field(form, 'DialStatus') ?? 'failed';
    if (!entry?.transfer) return xml(ctx, '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>');
    if (status === 'completed' || status === 'answer') {
      entry.transfer.resolve(true, 'the target answered');
      return xml(ctx, '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>');
    }
    entry.transfer.resolve(false, `the target was ${status}`);
    xml(ctx, this.streamXml(entry));
  }
}
