import { AppError } from '../../../core/errors.js';
import type { OutboundHttp, WebhookSender } from '../net/outbound-http.js';
import { signatureHeader, signatureHeaderValue } from './signing.js';

/** Posts signed JSON webhooks through the SSRF-safe client. */
export interface SignedWebhookSenderOptions {
  readonly http: OutboundHttp;
  /** The tenant's webhook signing secret. */
  readonly secretFor: (tenantId: string) => string | Promise<string>;
  readonly timeoutMs?: number;
  readonly now?: () => number;
}

export class SignedWebhookSender implements WebhookSender {
  constructor(private readonly options: SignedWebhookSenderOptions) {}

  async send(tenantId: string, url: string, payload: unknown, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<number> {
    const body = JSON.stringify(payload);
    const secret = await this.options.secretFor(tenantId);
    if (!secret) throw new AppError('failed_precondition', 'the tenant has no webhook signing secret');
    const response = await this.options.http.request(tenantId, {
      method: 'POST',
      url,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'user-agent': 'voice-agent-platform-webhooks',
        [signatureHeader.toLowerCase()]: signatureHeaderValue(secret, body, this.options.now?.() ?? Date.now()),
      },
      body,
      timeoutMs: this.options.timeoutMs ?? 5_000,
      signal,
    });
    return response.status;
  }
}
