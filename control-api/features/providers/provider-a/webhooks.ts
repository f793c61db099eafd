import Router from '@koa/router';
import type Koa from 'koa';
import { AppError } from '../../../../core/errors.js';
import type { Logger } from '../../../../core/logger.js';
import { isRefusal, type ProviderCallEntry, type ProviderCalls } from '../provider-calls.js';
import { field, readForm, requireFields, xml, type FormPairs, type PublicUrls } from '../provider-http.js';
import type { CloudAccount, ProviderNumbers } from '../provider-numbers.js';
import { accountA } from './account.js';
import type { StreamCallControl } from '../stream-call.js';
import { signatureHeaderA, validSignatureA } from './signature.js';
import { hangupTwiml, rejectTwiml } from './twiml.js';

interface WebhookDeps {
  readonly calls: ProviderCalls;
  readonly numbers: ProviderNumbers;
  readonly urls: PublicUrls;
  readonly logger: Logger;
}

/** What the webhooks need of the provider A adapter (provider-a.ts). */
export interface WebhookHostA {
  readonly prefix: string;
  control(entry: ProviderCallEntry): StreamCallControl;
  streamTwiml(entry: ProviderCallEntry): string;
  ringing(entry: ProviderCallEntry): void;
  unanswered(entry: ProviderCallEntry, status: string, sipStatus: number | undefined): void;
  mayReconnect(entry: ProviderCallEntry): boolean;
}

const terminal = new Set(['completed', 'busy', 'no-answer', 'failed', 'canceled']);

/**
 * Provider A's webhooks. Each one is signature-checked (403 otherwise) with the Auth Token of the
 * number the call is on, over the URL as the provider requested it (`publicBaseUrl` + path and
 * query) and every form field; a missing field is 400, an unknown number or call 404.
 */
export function providerAWebhooks(a: WebhookHostA, d: WebhookDeps): Router {
  const router = new Router({ prefix: a.prefix });

  /** The form of a request the provider signed with `account`'s Auth Token. */
  async function signedForm(ctx: Koa.Context, account: CloudAccount<'providerA'>): Promise<FormPairs> {
    const form = await readForm(ctx);
    if (!validSignatureA(account.authToken, ctx.get(signatureHeaderA) || undefined, d.urls.requested(ctx.originalUrl), form)) {
      d.logger.warn({ provider: 'providerA', path: ctx.path }, 'webhook refused: signature does not match');
      throw new AppError('permission_denied', 'the request signature does not match');
    }
    return form;
  }

  /** A live call by the token in the path, or a call that ended moments ago (late callbacks). */
  function callOf(ctx: Koa.Context): { entry?: ProviderCallEntry; account: CloudAccount<'providerA'> } {
    const token = String(ctx.params.token);
    const entry = d.calls.get(token);
    const account = accountA(entry) ?? accountA(d.calls.recentlyEnded(token));
    if (!account) throw new AppError('not_found', 'no such call');
    return entry && accountA(entry) ? { entry, account } : { account };
  }

  // An inbound call to one of our numbers: answer it with a media stream to us.
  router.post('/voice', async (ctx) => {
    const form = await readForm(ctx);
    const { To, From, CallSid, AccountSid } = requireFields(form, ['To', 'From', 'CallSid', 'AccountSid']);
    const number = await d.numbers.byE164('providerA', To);
    const account = accountA(number);
    if (!number || !account) throw new AppError('not_found', `number ${To} is not provisioned on provider A`);
    if (!validSignatureA(account.authToken, ctx.get(signatureHeaderA) || undefined, d.urls.requested(ctx.originalUrl), form)) {
      d.logger.warn({ provider: 'providerA', number: number.e164 }, 'inbound call refused: signature does not match');
      throw new AppError('permission_denied', 'the request signature does not match');
    }
    if (AccountSid !== account.accountSid) throw new AppError('permission_denied', `the call is for account ${AccountSid}, not the number's`);
    const log = d.logger.child({ provider: 'providerA', callSid: CallSid, number: number.e164 });
    if (!number.enabled) {
      log.info('inbound call to a disabled number: rejected');
      return xml(ctx, rejectTwiml('rejected'));
    }
    const opened = d.calls.open({ provider: 'providerA', number, direction: 'inbound', ours: number.e164, remote: From, callSid: CallSid, dial: undefined }, (entry) => a.control(entry));
    if (isRefusal(opened)) {
      log.info({ reason: opened.reason }, 'inbound call refused busy');
      return xml(ctx, rejectTwiml('busy'));
    }
    log.info('inbound call: answering with a media stream');
    xml(ctx, a.streamTwiml(opened));
  });

  // The callee of a campaign call answered: the provider asks what to do (our `Url`).
  router.post('/calls/:token/answer', async (ctx) => {
    const { entry, account } = callOf(ctx);
    await signedForm(ctx, account);
    if (!entry || entry.dial?.settled) return xml(ctx, hangupTwiml());
    d.calls.markAnswered(entry);
    xml(ctx, a.streamTwiml(entry));
  });

  // Progress of a campaign call: initiated, ringing, in-progress, then one final status.
  router.post('/calls/:token/status', async (ctx) => {
    const { entry, account } = callOf(ctx);
    const form = await signedForm(ctx, account);
    const { CallStatus } = requireFields(form, ['CallStatus']);
    ctx.status = 204;
    if (!entry) return;
    const sip = Number(field(form, 'SipResponseCode'));
    if (CallStatus === 'ringing') a.ringing(entry);
    else if (CallStatus === 'in-progress') d.calls.markAnswered(entry);
    else if (terminal.has(CallStatus)) {
      if (entry.call) {
        entry.transfer?.resolve(false, 'the caller hung up during the transfer');
        entry.call.providerEnded('remote-bye');
      } else a.unanswered(entry, CallStatus, Number.isInteger(sip) && sip >= 100 && sip < 700 ? sip : undefined);
    }
  });

  // Our `<Connect>` ended while the call is still up (the stream dropped): stream again, or hang up.
  router.post('/calls/:token/stream-ended', async (ctx) => {
    const { entry, account } = callOf(ctx);
    const form = await signedForm(ctx, account);
    if (!entry || field(form, 'CallStatus') === 'completed') {
      entry?.call?.providerEnded('remote-bye');
      return xml(ctx, hangupTwiml());
    }
    const state = entry.call?.state;
    if ((state === undefined || state === 'active' || state === 'reconnecting') && a.mayReconnect(entry)) return xml(ctx, a.streamTwiml(entry));
    if (entry.call) void entry.call.hangup('stream-lost');
    else d.calls.giveUp(entry, 'the media stream could not be connected');
    xml(ctx, hangupTwiml());
  });

  // The transfer target answered (the `<Number>`/`<Sip>` statusCallback, event answered).
  router.post('/calls/:token/transfer-answered', async (ctx) => {
    const { entry, account } = callOf(ctx);
    await signedForm(ctx, account);
    entry?.transfer?.resolve(true, 'the target answered');
    ctx.status = 204;
  });

  // The `<Dial>` of a transfer ended: the target failed (the caller comes back to the agent) or the bridged call is over.
  router.post('/calls/:token/transfer-ended', async (ctx) => {
    const { entry, account } = callOf(ctx);
    const form = await signedForm(ctx, account);
    const dialStatus = field(form, 'DialCallStatus') ?? 'failed';
    const callerGone = field(form, 'CallStatus') === 'completed';
    if (!entry?.transfer) return xml(ctx, hangupTwiml());
    if (dialStatus === 'completed' || dialStatus === 'answered') {
      entry.transfer.resolve(true, 'the target answered');
      return xml(ctx, hangupTwiml());
    }
    entry.transfer.resolve(false, callerGone ? 'the caller hung up during the transfer' : `the target was ${dialStatus}`);
    if (callerGone) {
      entry.call?.providerEnded('remote-bye');
      return xml(ctx, hangupTwiml());
    }
    xml(ctx, a.streamTwiml(entry));
  });

  return router;
}
