/**
 * The HTTP types every caller of an outside address shares: recipe API and Webhook blocks, campaign
 * callbacks, the post-call webhook and the signed webhook sender. They live on the platform floor
 * so those callers need not import each other; the one implementation is `SafeHttp`
 * (net/safe-http.ts), which refuses private and loopback targets unless allowed.
 */
export interface HttpRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface OutboundHttp {
  request(tenantId: string, request: HttpRequest): Promise<HttpResponse>;
}

export interface WebhookSender {
  /** Posts a signed JSON payload; resolves with the HTTP status. */
  send(tenantId: string, url: string, payload: unknown, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<number>;
}
