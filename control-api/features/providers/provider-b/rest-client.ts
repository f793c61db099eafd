import type { CloudAccount } from '../provider-numbers.js';
import { ProviderApiError, providerRequest } from '../provider-rest.js';

/**
 * Provider B's REST API (its public "Calls / connect" reference): `POST
 * https://<Sub Domain>/v1/Accounts/<Account SID>/Calls/connect.json` with HTTP basic auth (API
 * Key : API Token), form `From` (the number to call), `CallerId` (our number), `Url` (the account's
 * app flow `http://my.exotel.com/<Account SID>/exoml/start_voice/<Outbound App Id>`, whose Voicebot
 * applet streams to us), `TimeOut` (ring seconds), `StatusCallback`, `StatusCallbackEvents[]`
 * (answered, terminal) and `CustomField` (our call token, handed to the applets). Answers
 * `{Call: {Sid, Status, ...}}`.
 */
export class ProviderBRest {
  constructor(
    /** Overrides `https://<Sub Domain>` (config `providers.providerB.apiBaseUrl`: a proxy, or the loopback fake). */
    private readonly baseUrl: string | undefined,
    private readonly timeoutMs = 10_000,
  ) {}

  async connect(account: CloudAccount<'providerB'>, call: { to: string; from: string; statusCallback: string; timeoutSeconds: number; customField: string }): Promise<{ sid: string }> {
    const form: [string, string][] = [
      ['From', call.to],
      ['CallerId', call.from],
      ['Url', `http://my.exotel.com/${encodeURIComponent(account.accountSid)}/exoml/start_voice/${encodeURIComponent(account.outboundAppId)}`],
      ['TimeOut', String(call.timeoutSeconds)],
      ['StatusCallback', call.statusCallback],
      ['StatusCallbackEvents[0]', 'answered'],
      ['StatusCallbackEvents[1]', 'terminal'],
      ['CustomField', call.customField],
    ];
    const body = await providerRequest({ method: 'POST', url: this.url(account, 'Calls/connect.json'), basicAuth: { user: account.apiKey, password: account.apiToken }, form, what: 'provider B', timeoutMs: this.timeoutMs });
    const inner = (body.Call ?? body.call) as Record<string, unknown> | undefined;
    const sid = inner?.Sid ?? inner?.sid;
    if (typeof sid !== 'string' || sid === '') throw new ProviderApiError('provider B placed a call without a Sid', 200, false);
    return { sid };
  }

  private url(account: CloudAccount<'providerB'>, path: string): string {
    const base = (this.baseUrl ?? `https://${account.subDomain}`).replace(/\/+$/, '');
    return `${base}/v1/Accounts/${encodeURIComponent(account.accountSid)}/${path}`;
  }
}
