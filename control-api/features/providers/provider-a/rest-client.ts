import type { CloudAccount } from '../provider-numbers.js';
import { ProviderApiError, providerRequest } from '../provider-rest.js';

/**
 * Provider A's REST API (public "Call resource" reference), the calls we make:
 * - create: `POST /2010-04-01/Accounts/{AccountSid}/Calls.json`, form `To`, `From`, `Url` (the
 *   instructions fetched when the callee answers), `StatusCallback` with `StatusCallbackEvent`
 *   repeated per event, `Timeout` (ring seconds); answers 201 with the call resource (`sid`).
 * - update: `POST .../Calls/{CallSid}.json` with `Status=completed` (hang up an answered call),
 *   `Status=canceled` (stop one still queued or ringing) or `Twiml` (replace what the call does now:
 *   the transfer's `<Dial>`).
 * HTTP basic auth with the Account SID and Auth Token. Errors carry `{code, message, status}`.
 */
export class ProviderARest {
  constructor(
    /** `https://api.twilio.com` in production (config `providers.providerA.apiBaseUrl`). */
    private readonly baseUrl: string,
    private readonly timeoutMs = 10_000,
  ) {}

  async createCall(account: CloudAccount<'providerA'>, call: { to: string; from: string; url: string; statusCallback: string; timeoutSeconds: number; signal?: AbortSignal }): Promise<{ sid: string; status: string }> {
    const form: [string, string][] = [
      ['To', call.to],
      ['From', call.from],
      ['Url', call.url],
      ['Method', 'POST'],
      ['StatusCallback', call.statusCallback],
      ['StatusCallbackMethod', 'POST'],
      ...['initiated', 'ringing', 'answered', 'completed'].map((e): [string, string] => ['StatusCallbackEvent', e]),
      ['Timeout', String(call.timeoutSeconds)],
    ];
    const body = await providerRequest({ method: 'POST', url: this.url(account, 'Calls.json'), basicAuth: auth(account), form, what: 'provider A', timeoutMs: this.timeoutMs, ...(call.signal ? { signal: call.signal } : {}) });
    if (typeof body.sid !== 'string' || body.sid === '') throw new ProviderApiError('provider A created a call without a sid', 201, false);
    return { sid: body.sid, status: typeof body.status === 'string' ? body.status : 'queued' };
  }

  /** Hangs up (`completed`) or cancels (`canceled`, before an answer) a call. */
  async endCall(account: CloudAccount<'providerA'>, callSid: string, status: 'completed' | 'canceled'): Promise<void> {
    await providerRequest({ method: 'POST', url: this.url(account, `Calls/${encodeURIComponent(callSid)}.json`), basicAuth: auth(account), form: [['Status', status]], what: 'provider A', timeoutMs: this.timeoutMs });
  }

  /** Replaces the call's instructions now (the media stream, if any, stops). */
  async redirect(account: CloudAccount<'providerA'>, callSid: string, twiml: string): Promise<void> {
    await providerRequest({ method: 'POST', url: this.url(account, `Calls/${encodeURIComponent(callSid)}.json`), basicAuth: auth(account), form: [['Twiml', twiml]], what: 'provider A', timeoutMs: this.timeoutMs });
  }

  private url(account: CloudAccount<'providerA'>, path: string): string {
    return `${this.baseUrl.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(account.accountSid)}/${path}`;
  }
}

const auth = (account: CloudAccount<'providerA'>) => ({ user: account.accountSid, password: account.authToken });
