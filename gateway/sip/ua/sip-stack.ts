import { isIP } from 'node:net';
import type { Clock } from '../../../core/clock.js';
import type { Logger } from '../../../core/logger.js';
import { Headers } from '../message/headers.js';
import { SipRequest, SipResponse, type SipMessage } from '../message/message.js';
import { isAcceptable } from '../message/media-type.js';
import { KNOWN_METHODS } from '../message/parser.js';
import { createErrorResponse, createResponse } from '../message/response.js';
import { isSipUri } from '../message/uri.js';
import { responseTarget, type Via } from '../message/via.js';
import { InviteServerTransaction } from '../transaction/server.js';
import { rfc3261ServerKey } from '../transaction/keys.js';
import { TransactionTable } from '../transaction/table.js';
import { DEFAULT_TIMERS, type TimerValues } from '../transaction/timers.js';
import type { ServerTransactionUser, TransactionTransport } from '../transaction/types.js';
import type { TransportSet } from '../transport/transport-set.js';
import type { Flow, TransportEvent, TransportName } from '../transport/types.js';
import { DialogTable } from '../dialog/dialog-table.js';
import { countRequestReceived, countRequestSent, countResponseReceived, countResponseSent } from '../sip-metrics.js';
import { maddrHonoured } from './maddr-policy.js';
import { ServerRequest } from './server-request.js';

/** Methods this UA implements (the Allow header, RFC 3261 sec. 20.5). */
export const ALLOWED_METHODS = ['INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS', 'UPDATE', 'INFO', 'REFER', 'NOTIFY'] as const;
const ALLOW_VALUE = ALLOWED_METHODS.join(', ');

/** What a guard decides for a new out-of-dialog request before any transaction exists. */
export type GuardVerdict =
  | { readonly action: 'accept' }
  /** Silently dropped: no transaction, no answer (scanners, blocked sources). */
  | { readonly action: 'drop'; readonly why: string }
  /** Answered at once, e.g. 503 with Retry-After under overload. */
  | { readonly action: 'reject'; readonly status: number; readonly headers?: ReadonlyArray<readonly [string, string]>; readonly why: string };

export type RequestGuard = (request: SipRequest, flow: Flow) => GuardVerdict;
export type RequestHandler = (request: ServerRequest) => void | Promise<void>;

export interface SipStackOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly timers?: Partial<TimerValues>;
  /** Server / User-Agent header value. */
  readonly userAgent?: string;
  /**
   * How late the long transaction wait timers (J, L...: 64*T1) may fire so that many end in one
   * wake-up (see TransactionOptions.waitSlackMs); 100 ms by default.
   */
  readonly waitSlackMs?: number;
  /** Host advertised in Contact and Via; the bound address when absent. */
  readonly publicAddress?: string;
  /** Multicast groups a Via maddr may name for responses; other maddr values must be the source (maddr-policy.ts). */
  readonly maddrMulticast?: readonly string[];
  /** Option tags we understand in Require (RFC 3261 sec. 8.2.2.3); empty by default. */
  readonly supported?: readonly string[];
}

/**
 * The transaction user of an INVITE server transaction: one small object with prototype methods
 * instead of closures per request (Timer L keeps it alive for 64*T1). Until `armed`, nothing
 * reaches the dialogs; then only an ACK for a 2xx that reused the INVITE's branch does (RFC 6026
 * sec. 7.1). `request` is what a CANCEL acts on (sec. 9.2), dropped once the INVITE is answered
 * so that the request and its response are not kept for Timer L.
 */
class RequestUser implements ServerTransactionUser {
  armed = false;
  /** Set for INVITEs that reach the handler: a CANCEL finds them (others get 481). */
  cancellable = false;
  request: ServerRequest | undefined;

  constructor(private readonly dialogs: DialogTable) {}

  ack(ack: SipRequest): void {
    if (this.armed) this.dialogs.findForRequest(ack)?.receiveAck(ack);
  }

  answered(): void {
    this.request = undefined;
  }
}

/** Non-INVITE server transactions need nothing from their user: timeouts and transport errors are dropped. */
const NO_USER: ServerTransactionUser = {};

/** Responses over UDP to a Via address other than the request's source (RFC 3261 sec. 18.2.2). */
class ViaResponseTransport implements TransactionTransport {
  readonly reliable = false;
  readonly transport = 'UDP';

  constructor(
    private readonly transports: TransportSet,
    private readonly address: string,
    private readonly port: number,
  ) {}

  send(m: SipMessage): void {
    this.transports.flowTo('UDP', { address: this.address, port: this.port }).send(m);
  }

  sendWire(wire: Buffer): void {
    const flow = this.transports.flowTo('UDP', { address: this.address, port: this.port });
    if (flow.sendWire) flow.sendWire(wire);
    else throw new Error('UDP flow cannot send serialized messages');
  }
}

/**
 * The stack core: transports in, transactions (sec. 17), dialogs (sec. 12) and the transaction
 * user out. Everything the RFC lets the core answer by itself is answered here: 400/505 for
 * malformed requests that can be answered (sec. 8.2.6, never ACK), 416 (sec. 8.2.2.1), 420
 * (sec. 8.2.2.3), 405/501 (sec. 8.2.1), 406 (sec. 8.2.3), 481 (sec. 12.2.2, 9.2), OPTIONS (sec. 11.2), CANCEL
 * (sec. 9.2, with 487 for the INVITE). Nothing that arrives can throw out of `receive`.
 */
export class SipStack {
  readonly table: TransactionTable;
  readonly dialogs = new DialogTable();
  private transports: TransportSet | undefined;
  private readonly supported: Set<string>;
  private handler: RequestHandler | undefined;
  private guard: RequestGuard | undefined;
  readonly userAgent: string;
  /** Our Server name as a warn-agent token (RFC 3261 sec. 20.43) for the detail of a 400. */
  private readonly warnAgent: string;
  private readonly timerSettings: TimerValues;

  constructor(readonly options: SipStackOptions) {
    this.table = new TransactionTable({ clock: options.clock, waitSlackMs: options.waitSlackMs ?? 100, ...(options.timers ? { timers: options.timers } : {}) });
    this.supported = new Set((options.supported ?? []).map((s) => s.toLowerCase()));
    this.userAgent = options.userAgent ?? 'voice-agent-platform';
    this.warnAgent = this.userAgent.replace(/[^A-Za-z0-9.!%*_+`'~-]/g, '-') || '-';
    this.timerSettings = { ...DEFAULT_TIMERS, ...options.timers };
  }

  get clock(): Clock {
    return this.options.clock;
  }

  get logger(): Logger {
    return this.options.logger;
  }

  get timerValues(): TimerValues {
    return this.timerSettings;
  }

  attach(transports: TransportSet): void {
    this.transports = transports;
  }

  onRequest(handler: RequestHandler): void {
    this.handler = handler;
  }

  setGuard(guard: RequestGuard): void {
    this.guard = guard;
  }

  /**
   * True when a request with this top Via and method is a retransmission of one whose server
   * transaction is live (sec. 17.2.3): admission control lets it through and the transaction
   * absorbs it, answering it again from what it sent (sec. 17.2.1, 17.2.2). Refusing it instead
   * would answer 503 to an INVITE being set up, or to a BYE resent because its 200 was slow to
   * come back, when its transaction still holds that 200.
   */
  isRetransmission(topVia: Via, method: string): boolean {
    const key = rfc3261ServerKey(topVia, method);
    return key !== undefined && this.table.hasServer(key);
  }

  /** The transport listener: never throws, whatever arrives. */
  readonly receive = (event: TransportEvent): void => {
    try {
      if (event.kind === 'invalid') this.answerInvalid(event);
      else if (event.message instanceof SipRequest) this.receiveRequest(event.message, event.flow);
      else if (event.message instanceof SipResponse) this.receiveResponse(event.message, event.flow.transport);
    } catch (error) {
      this.logger.warn({ err: error, remote: event.flow.remote }, 'SIP message dropped after an internal error');
    }
  };

  private answerInvalid(event: Extract<TransportEvent, { kind: 'invalid' }>): void {
    const res = createErrorResponse(event.error, { warnAgent: this.warnAgent });
    this.logger.debug({ reason: event.error.reason, remote: event.flow.remote, answered: res !== undefined }, 'malformed SIP message');
    if (!res) return;
    countResponseSent(event.error.basis?.method ?? '', res.status, event.flow.transport);
    res.headers.append('Server', this.userAgent);
    // The Via itself may be what is broken, so the answer goes back where the packet came from.
    try {
      event.flow.send(res);
    } catch {
      // The peer went away: nothing to do.
    }
  }

  private receiveResponse(res: SipResponse, transport: string): void {
    countResponseReceived(res.cseq.method, res.status, transport);
    if (!this.table.receiveResponse(res)) {
      // A 2xx retransmission after our INVITE transaction ended: the dialog re-ACKs it (sec. 13.2.2.4).
      if (res.cseq.method === 'INVITE' && res.status < 300 && res.status >= 200) this.dialogs.findForResponse(res)?.receiveStray2xx(res);
    }
  }

  /** RFC 3261 sec. 18.2.2: reliable flows answer on the connection, UDP at the Via's address. */
  private responseTransport(req: SipRequest, flow: Flow): TransactionTransport {
    if (flow.reliable || !this.transports) return flow;
    const via = req.topVia;
    // RFC 3261 sec. 18.2.2 maddr, honoured only for the source or an allowed multicast group (maddr-policy.ts).
    const target = via.maddr === undefined || maddrHonoured(via.maddr, flow.remote.address, this.options.maddrMulticast) ? responseTarget(via) : responseTarget({ ...via, maddr: undefined });
    const address = target.host.charCodeAt(0) === 91 ? target.host.slice(1, -1) : target.host;
    // Most peers answer from where they sent: the flow the request came on is then the way back.
    if (address === flow.remote.address && target.port === flow.remote.port) return flow;
    return new ViaResponseTransport(this.transports, address, target.port);
  }

  private receiveRequest(req: SipRequest, flow: Flow): void {
    countRequestReceived(req.method, flow.transport);
    req.stampReceived(flow.remote.address, flow.remote.port);
    const inDialog = req.to.tag !== undefined;
    if (!inDialog && req.method !== 'ACK' && req.method !== 'CANCEL' && this.guard) {
      const verdict = this.guard(req, flow);
      if (verdict.action === 'drop') return;
      if (verdict.action === 'reject') {
        // Stateless (sec. 8.2.7): under a flood, no transaction may be kept per refused request.
        const res = createResponse(req, verdict.status, undefined, { headers: verdict.headers ?? [] });
        this.decorate(res, req);
        countResponseSent(req.method, verdict.status, flow.transport);
        try {
          this.responseTransport(req, flow).send(res);
        } catch {
          // Nowhere to send it: the peer is gone.
        }
        return;
      }
    }
    const user = req.method === 'INVITE' ? new RequestUser(this.dialogs) : undefined;
    const result = this.table.receiveRequest(req, this.responseTransport(req, flow), user ?? NO_USER);
    if (result.kind === 'absorbed') return;
    if (result.kind === 'ack') {
      this.dialogs.findForRequest(req)?.receiveAck(req);
      return;
    }
    const sreq = new ServerRequest(req, flow, result.transaction, this);
    // The INVITE's own transaction passes an ACK for its 2xx up when the peer reused the branch.
    if (user) user.armed = true;
    if (req.method === 'CANCEL') {
      this.cancel(sreq, result.cancels);
      return;
    }
    const scheme = req.requestUri.scheme;
    if (scheme !== 'sip' && scheme !== 'sips' && scheme !== 'tel') {
      sreq.respond(416);
      return;
    }
    const unsupported = req.headers.has('require') ? req.list('require').filter((tag) => !this.supported.has(tag.toLowerCase())) : [];
    if (unsupported.length > 0) {
      sreq.respond(420, { headers: [['Unsupported', unsupported.join(', ')]] });
      return;
    }
    if (!(ALLOWED_METHODS as readonly string[]).includes(req.method)) {
      sreq.respond(KNOWN_METHODS.has(req.method) ? 405 : 501);
      return;
    }
    // Sec. 8.2.3, 21.4.7 (RFC 4475 sec. 3.3.15): our answer to an INVITE carries SDP.
    if (req.method === 'INVITE' && !isAcceptable(req.headers.getAll('accept'), 'application', 'sdp')) {
      sreq.respond(406, { headers: [['Accept', 'application/sdp']] });
      return;
    }
    if (inDialog) {
      const dialog = this.dialogs.findForRequest(req);
      if (dialog) dialog.receiveRequest(sreq);
      else sreq.respond(481);
      return;
    }
    if (user && result.transaction instanceof InviteServerTransaction) {
      user.cancellable = true;
      user.request = sreq;
    }
    if (req.method === 'BYE' || req.method === 'UPDATE' || req.method === 'INFO' || req.method === 'REFER' || req.method === 'NOTIFY') {
      sreq.respond(481);
      return;
    }
    if (!this.handler) {
      if (req.method === 'OPTIONS') this.answerOptions(sreq);
      else sreq.respond(503, { headers: [['Retry-After', '5']] });
      return;
    }
    const handled = this.handler(sreq);
    if (handled instanceof Promise) {
      handled.catch((error: unknown) => {
        this.logger.error({ err: error, method: req.method, sipCallId: req.callId }, 'request handler failed');
        if (!sreq.answered) sreq.respond(500);
      });
    }
  }

  /** RFC 3261 sec. 9.2: 200 to the CANCEL, 487 to the INVITE if it is still unanswered. */
  private cancel(sreq: ServerRequest, target: InviteServerTransaction | undefined): void {
    const user = target?.tu;
    if (!(user instanceof RequestUser) || !user.cancellable) {
      sreq.respond(481);
      return;
    }
    sreq.respond(200);
    const invite = user.request;
    if (!invite || invite.answered) return;
    invite.cancel();
    invite.respond(487);
  }

  /** RFC 3261 sec. 11.2: what we allow, accept and support. */
  answerOptions(sreq: ServerRequest): void {
    sreq.respond(200, {
      headers: [
        ['Accept', 'application/sdp'],
        ['Accept-Encoding', 'identity'],
        ['Accept-Language', 'en'],
        ['Supported', [...this.supported].join(', ')],
      ],
    });
  }

  decorate(res: SipResponse, req: SipRequest): void {
    res.headers.append('Server', this.userAgent);
    // Allow on every response to INVITE/OPTIONS and on 405 (sec. 20.5, 21.4.6).
    if (res.status === 405 || res.status === 501 || req.method === 'OPTIONS' || (req.method === 'INVITE' && res.status >= 200 && res.status < 300)) {
      res.headers.append('Allow', ALLOW_VALUE);
    }
  }

  /**
   * Where a new request to `uri` goes (RFC 3263 without DNS: IP literals and the flow we know).
   * `serverName`: the domain the IP literal was resolved from, for a TLS peer's certificate.
   */
  flowFor(uriText: string, fallback?: Flow, serverName?: string): Flow {
    if (fallback?.reliable && fallback.open) return fallback;
    if (!this.transports) throw new Error('SIP stack has no transports');
    const uri = parseTarget(uriText);
    // A real IP literal only (dgram sends 1270.0.0.1 to DNS), over a transport we run, else the known flow.
    if (uri && isIP(uri.host) !== 0) {
      const transport = uri.transport ?? fallback?.transport ?? 'UDP';
      if (!fallback || this.transports.get(transport.toUpperCase() as TransportName)) {
        const named = serverName && transport.toUpperCase() === 'TLS' && isIP(serverName) === 0 ? { serverName } : {};
        return this.transports.flowTo(transport, { address: uri.host, port: uri.port, ...named });
      }
    }
    if (fallback) return this.transports.flowTo(fallback.transport, fallback.remote);
    throw new Error(`cannot resolve ${uriText}: only IP literals are routed without DNS`);
  }

  /**
   * Our Contact on a flow (sec. 8.1.1.8). `sips:` only for a SIPS dialog (sec. 12.1.1): a `sip:` request
   * over TLS gets `sip:...;transport=tls` (RFC 5630 sec. 3.1.3); baresip 1.0 never ACKs a `sips:` one.
   */
  contactUri(flow: Flow, sips = false, user = 'gateway'): string {
    const host = this.advertisedHost(flow);
    const port = this.transports?.ports[flow.transport] ?? flow.local.port;
    const t = flow.transport.toLowerCase();
    const secure = sips && flow.transport === 'TLS';
    // A SIPS URI already means TLS, so its transport is the underlying one (RFC 5630 sec. 3.1.2).
    const param = t === 'udp' ? '' : `;transport=${t === 'tls' && secure ? 'tcp' : t}`;
    return `${secure ? 'sips' : 'sip'}:${user}@${host}:${port}${param}`;
  }

  /** Top Via for a request we send (sec. 8.1.1.7) on a flow. */
  viaFor(flow: Flow, branch: string): string {
    const port = this.transports?.ports[flow.transport] ?? flow.local.port;
    return `SIP/2.0/${flow.transport} ${this.advertisedHost(flow)}:${port};branch=${branch};rport`;
  }

  private advertisedHost(flow: Flow): string {
    const h = this.options.publicAddress ?? (flow.local.address === '0.0.0.0' || flow.local.address === '::' || flow.local.address === '' ? '127.0.0.1' : flow.local.address);
    return h.includes(':') && !h.startsWith('[') ? `[${h}]` : h;
  }

  /** Sends a request in a client transaction; resolves with the final response (408/503 synthesised, sec. 8.1.3.1). */
  request(req: SipRequest, flow: Flow, onProvisional?: (res: SipResponse) => void, on2xxRetransmit?: (res: SipResponse) => void): Promise<SipResponse> {
    if (!req.headers.has('user-agent')) req.headers.append('User-Agent', this.userAgent);
    countRequestSent(req.method, flow.transport);
    return new Promise((resolve) => {
      let settled = false;
      const settle = (res: SipResponse): void => {
        if (settled) {
          if (res.status >= 200 && res.status < 300) on2xxRetransmit?.(res);
          return;
        }
        if (res.status < 200) {
          onProvisional?.(res);
          return;
        }
        settled = true;
        resolve(res);
      };
      const synth = (status: number, reason: string): SipResponse => {
        const h = new Headers();
        for (const n of ['via', 'from', 'to', 'call-id', 'cseq']) for (const v of req.headers.getAll(n)) h.append(n, v);
        return new SipResponse(status, reason, h);
      };
      this.table.startClient(req, { reliable: flow.reliable, transport: flow.transport, send: (m, onLateFailure) => flow.send(m, onLateFailure) }, {
        response: settle,
        timeout: () => settle(synth(408, 'Request Timeout')),
        transportError: () => settle(synth(503, 'Service Unavailable (transport error)')),
      });
    });
  }

  /** ACK for a 2xx is sent outside any transaction (sec. 13.2.2.4, 17.1.1.3). */
  sendStateless(req: SipRequest, flow: Flow): void {
    countRequestSent(req.method, flow.transport);
    flow.send(req);
  }

  async close(): Promise<void> {
    await this.transports?.close();
  }
}

function parseTarget(text: string): { host: string; port: number; transport?: string } | undefined {
  try {
    const u = new SipRequest('OPTIONS', text).requestUri;
    if (!isSipUri(u)) return undefined;
    const t = u.params.get('transport');
    const host = u.host.replace(/^\[|\]$/g, '');
    return { host, port: u.port ?? (u.scheme === 'sips' ? 5061 : 5060), ...(t ? { transport: t === 'tcp' && u.scheme === 'sips' ? 'TLS' : t } : {}) };
  } catch {
    return undefined;
  }
}
