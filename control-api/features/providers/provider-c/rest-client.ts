import type { CloudAccount } from '../provider-numbers.js';
import { ProviderApiError, providerRequest } from '../provider-rest.js';

/**
 * Provider C's REST API (the public "Call" reference of the XML-and-stream providers): `POST
 * /v1/Account/{API Key}/Call/` with a JSON body `from`, `to`, `answer_url` (our instructions, when
 * the callee answers), `ring_url`, `hangup_url` (the final status and cause), `ring_timeout`;
 * answers 201 with `request_uuid`. `DELETE /v1/Account/{id}/Call/{call uuid}/` hangs up an
 * answered call, `DELETE .../Request/{request uuid}/` cancels one still ringing, `POST
 * .../Call/{call uuid}/` with `legs`/`aleg_url` transfers it to new instructions. HTTP basic auth
 * with the API Key and API Token.
 */
export class ProviderCRest {
  constructor(
    /** Config `providers.providerC.apiBaseUrl`. */
    private readonly baseUrl: string,
    private readonly timeoutMs = 10_000,
  ) {}

  async createCall(account: CloudAccount<'providerC'>, call: { to: string; from: string; answerUrl: string; ringUrl: string; hangupUrl: string; ringTimeoutSeconds: number }): Promise<{ requestUuid: string }> {
    const body = await providerRequest({
      method: 'POST',
      url: this.url(account, 'Call/'),
      basicAuth: auth(account),
      json: { from: call.from, to: call.to, answer_url: call.answerUrl, answer_method: 'POST', ring_url: call.ringUrl, ring_method: 'POST', hangup_url: call.hangupUrl, hangup_method: 'POST', ring_timeout: call.ringTimeoutSeconds },
      what: 'provider C', redact: [account.apiKey],
      timeoutMs: this.timeoutMs,
    });
    const uuid = body.request_uuid;
    if (typeof uuid !== 'string' || uuid === '') throw new ProviderApiError('provider C placed a call without a request_uuid', 201, false);
    return { requestUuid: uuid };
  }

  /** Hangs up an answered call (its call uuid) or cancels a ringing one (its request uuid). */
  async end(account: CloudAccount<'providerC'>, target: { callUuid: string } | { requestUuid: string }): Promise<void> {
    const path = 'callUuid' in target ? `Call/${encodeURIComponent(target.callUuid)}/` : `Request/${encodeURIComponent(target.requestUuid)}/`;
    await providerRequest({ method: 'DELETE', url: this.url(account, path), basicAuth: auth(account), what: 'provider C', redact: [account.apiKey], timeoutMs: this.timeoutMs });
  }

  /** Moves an answered call to new instructions (`legs: aleg`, fetched from `alegUrl`): the transfer. */
  async transfer(account: CloudAccount<'providerC'>, callUuid: string, alegUrl: string): Promise<void> {
    await providerRequest({ method: 'POST', url: this.url(account, `Call/${encodeURIComponent(callUuid)}/`), basicAuth: auth(account), json: { legs: 'aleg', aleg_url: alegUrl, aleg_method: 'POST' }, what: 'provider C', redact: [account.apiKey], timeoutMs: this.timeoutMs });
  }

  private url(account: CloudAccount<'providerC'>, path: string): string {
    return `${this.baseUrl.replace(/\/+$/, '')}/v1/Account/${encodeURIComponent(account.apiKey)}/${path}`;
  }
}

const auth = (account: CloudAccount<'providerC'>) => ({ user: account.apiKey, password: account.apiToken });
