import type { SipRequest, SipResponse } from '../message/message.js';
import { createResponse, newTag } from '../message/response.js';
import type { ServerTransaction } from '../transaction/table.js';
import type { Flow } from '../transport/types.js';
import { countResponseSent } from '../sip-metrics.js';

export interface RespondOptions {
  readonly reason?: string;
  readonly headers?: ReadonlyArray<readonly [string, string]>;
  readonly body?: string | Buffer;
  readonly contentType?: string;
}

/** Headers the stack adds to everything it answers (Server, Allow...). */
export interface ResponseDecorator {
  decorate(res: SipResponse, req: SipRequest): void;
}

/**
 * A request handed to the transaction user with its server transaction: `respond` builds the
 * response per RFC 3261 sec. 8.2.6 (one To tag per request, so every response of a dialog-
 * creating INVITE carries the same tag, sec. 12.1.1) and sends it through the transaction.
 */
export class ServerRequest {
  readonly toTag: string;
  /** Made on first use: most requests are never cancelled nor asked for a signal. */
  private aborter: AbortController | undefined;
  private final: SipResponse | undefined;

  constructor(
    readonly request: SipRequest,
    readonly flow: Flow,
    readonly transaction: ServerTransaction,
    private readonly decorator: ResponseDecorator,
  ) {
    this.toTag = request.to.tag ?? newTag();
  }

  /** Aborted when a CANCEL for this INVITE arrives (RFC 3261 sec. 9.2). */
  get signal(): AbortSignal {
    return (this.aborter ??= new AbortController()).signal;
  }

  get finalResponse(): SipResponse | undefined {
    return this.final;
  }

  get answered(): boolean {
    return this.final !== undefined;
  }

  build(status: number, options: RespondOptions = {}): SipResponse {
    const headers: Array<readonly [string, string]> = [...(options.headers ?? [])];
    const body = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body, 'utf8');
    if (body && body.length > 0) headers.push(['Content-Type', options.contentType ?? 'application/sdp']);
    const res = createResponse(this.request, status, options.reason, { toTag: this.toTag, headers, ...(body ? { body } : {}) });
    this.decorator.decorate(res, this.request);
    return res;
  }

  /** Sends a response; finals after the first are ignored except 2xx retransmissions of an INVITE. */
  respond(status: number, options: RespondOptions = {}): SipResponse {
    const res = this.build(status, options);
    this.send(res);
    return res;
  }

  send(res: SipResponse): void {
    if (res.status >= 200) {
      if (this.final && !(this.final.status < 300 && res === this.final)) return;
      this.final = res;
    }
    countResponseSent(this.request.method, res.status, this.flow.transport);
    this.transaction.respond(res);
  }

  /** Resends the 2xx the transaction accepted (RFC 3261 sec. 13.3.1.4; RFC 6026 sec. 7.1). */
  retransmitFinal(): void {
    if (this.final && this.final.status < 300) this.transaction.respond(this.final);
  }

  cancel(): void {
    (this.aborter ??= new AbortController()).abort(new Error('CANCEL received'));
  }
}
