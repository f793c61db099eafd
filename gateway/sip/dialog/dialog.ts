import { randomInt } from 'node:crypto';
import type { Clock } from '../../../core/clock.js';
import type { Logger } from '../../../core/logger.js';
import { TypedEmitter } from '../../../core/typed-emitter.js';
import { Headers } from '../message/headers.js';
import { SipRequest, type SipResponse } from '../message/message.js';
import { newBranch } from '../transaction/keys.js';
import type { TimerValues } from '../transaction/timers.js';
import type { Flow } from '../transport/types.js';
import type { ServerRequest } from '../ua/server-request.js';
import { SipError } from '../ua/sip-error.js';
import { AckWait } from './ack-wait.js';
import { sipsDialog } from './sips-dialog.js';
import { dialogKey, type DialogEntry, type DialogTable } from './dialog-table.js';

/** What a dialog needs from the stack (SipStack satisfies it). */
export interface DialogHost {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly timerValues: TimerValues;
  readonly dialogs: DialogTable;
  request(req: SipRequest, flow: Flow, onProvisional?: (r: SipResponse) => void, on2xxRetransmit?: (r: SipResponse) => void): Promise<SipResponse>;
  sendStateless(req: SipRequest, flow: Flow): void;
  flowFor(uri: string, fallback?: Flow): Flow;
  /** Our Contact on `flow`; `sips` when the dialog is a SIPS one (RFC 3261 sec. 8.1.1.8, 12.1.1). */
  contactUri(flow: Flow, sips?: boolean): string;
  viaFor(flow: Flow, branch: string): string;
  answerOptions(sreq: ServerRequest): void;
}

export type DialogEndReason = 'remote-bye' | 'local-bye' | 'ack-timeout' | 'rejected' | 'cancelled' | 'transport-error';

export interface DialogEvents {
  /** ACK received for our 2xx (UAS) or sent for theirs (UAC): the dialog is confirmed. `sdp`: an answer in the ACK (late offer, RFC 3261 sec. 13.2.1). */
  confirmed: [{ readonly sdp: string | undefined }];
  /** A target refresh (re-INVITE or UPDATE) was accepted; `sdp` is the offer that came with it. */
  modify: [{ readonly method: 'INVITE' | 'UPDATE'; readonly sdp: string | undefined }];
  /** INFO (e.g. application/dtmf-relay); already answered 200. */
  info: [{ readonly contentType: string | undefined; readonly body: string }];
  /** REFER (RFC 3515); the listener must answer `request` (202 or a failure). */
  refer: [{ readonly referTo: string; readonly request: ServerRequest }];
  /** NOTIFY of the implicit REFER subscription (RFC 3515 sec. 2.4.4); the listener must answer it. */
  notify: [{ readonly request: ServerRequest }];
  destroy: [{ readonly reason: DialogEndReason }];
}

/** Answers an offer in a re-INVITE/UPDATE: returns the SDP answer, or throws SipError (488...). */
export type OfferHandler = (offer: string | undefined, method: 'INVITE' | 'UPDATE') => Promise<string> | string;

export type DialogState = 'early' | 'confirmed' | 'terminated';

/**
 * Sees every target refresh the peer sends before it is answered (RFC 4028 sec. 9, 10: session
 * timers). `check` may throw SipError (422 + Min-SE) or names headers for the 2xx; `commit` runs
 * once that 2xx is sent.
 */
export interface RefreshObserver {
  check(req: SipRequest): { readonly headers: ReadonlyArray<readonly [string, string]>; commit(): void };
}

interface DialogInit {
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  readonly localUri: string;
  readonly remoteUri: string;
  readonly remoteTarget: string;
  readonly routeSet: readonly string[];
  readonly localSeq: number;
  readonly remoteSeq: number | undefined;
  readonly secure: boolean;
  /** No Contact (RFC 2543 peer): requests go back to where the INVITE came from. */
  readonly targetIsSource?: boolean;
}

const sdpBody = (m: { body: Buffer; contentType: string | undefined }): string | undefined =>
  m.body.length > 0 && (m.contentType ?? 'application/sdp').toLowerCase().startsWith('application/sdp') ? m.body.toString('utf8') : undefined;

/**
 * A dialog per RFC 3261 sec. 12: identified by Call-ID and both tags, with the route set, local and
 * remote CSeq and remote target; target refreshes (re-INVITE sec. 14, UPDATE RFC 3311) are
 * serialised, glare answered 491 (sec. 14.2); the UAS side retransmits its 2xx until the ACK
 * (sec. 13.3.1.4) and sends BYE when none comes.
 */
export class Dialog extends TypedEmitter<DialogEvents> implements DialogEntry {
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  readonly localUri: string;
  readonly remoteUri: string;
  /** Fixed once the dialog is confirmed; a 2xx confirming an early dialog replaces it (sec. 13.2.2.4). */
  routeSet: readonly string[];
  readonly secure: boolean;
  remoteTarget: string;
  /** Requests follow the flow the INVITE came on, not the remote target's host (RFC 2543 caller without Contact). */
  private targetIsSource: boolean;
  localSeq: number;
  remoteSeq: number | undefined;
  state: DialogState = 'early';
  offerHandler: OfferHandler | undefined;
  /** Methods the peer listed in Allow on the dialog-creating request or 2xx (sec. 20.5); undefined when absent. */
  remoteAllow: readonly string[] | undefined;
  /** Session timer hook (session-timer.ts); undefined when no timer runs. */
  refreshObserver: RefreshObserver | undefined;
  /** The call's logger once the dialog belongs to a call (its lines then carry the call id). */
  callLogger: Logger | undefined;
  private localRefresh = false;
  private incomingInvite: ServerRequest | undefined;
  private awaitingAck: AckWait | undefined;
  private lastAck: { seq: number; req: SipRequest } | undefined;

  private constructor(
    private readonly host: DialogHost,
    init: DialogInit,
    public flow: Flow,
  ) {
    super();
    this.callId = init.callId;
    this.localTag = init.localTag;
    this.remoteTag = init.remoteTag;
    this.localUri = init.localUri;
    this.remoteUri = init.remoteUri;
    this.remoteTarget = init.remoteTarget;
    this.routeSet = init.routeSet;
    this.localSeq = init.localSeq;
    this.remoteSeq = init.remoteSeq;
    this.secure = init.secure;
    this.targetIsSource = init.targetIsSource === true;
    host.dialogs.add(this);
  }

  get key(): string {
    return dialogKey(this.callId, this.localTag, this.remoteTag);
  }

  /** UAS side (sec. 12.1.1): built from the INVITE we are about to answer with a To tag. */
  static fromInvite(host: DialogHost, sreq: ServerRequest): Dialog {
    const req = sreq.request;
    const contact = req.contacts[0];
    if (contact?.wildcard) throw new SipError(400, 'Bad Contact Header');
    // An RFC 2543 UAC may leave out Contact (RFC 4475 sec. 3.4.1; only those pass the parser): requests
    // go to its From URI, sent over the INVITE's flow, the one address known to reach it.
    const remoteTarget = contact?.uriText ?? req.from.uriText;
    return withAllow(new Dialog(
      host,
      {
        callId: req.callId,
        localTag: sreq.toTag,
        remoteTag: req.from.tag ?? '',
        localUri: req.to.uriText,
        remoteUri: req.from.uriText,
        remoteTarget,
        routeSet: req.headers.values('record-route'),
        localSeq: randomInt(1, 2 ** 20),
        remoteSeq: req.cseq.seq,
        secure: sreq.flow.secure && sipsDialog(req),
        targetIsSource: contact === undefined,
      },
      sreq.flow,
    ), req);
  }

  /** UAC side (sec. 12.1.2): built from our INVITE and the 2xx (or 1xx with tag) that answered it. */
  static fromResponse(host: DialogHost, invite: SipRequest, res: SipResponse, flow: Flow): Dialog {
    const contact = res.contacts[0];
    return withAllow(new Dialog(
      host,
      {
        callId: invite.callId,
        localTag: invite.from.tag ?? '',
        remoteTag: res.to.tag ?? '',
        localUri: invite.from.uriText,
        remoteUri: invite.to.uriText,
        remoteTarget: contact?.uriText ?? invite.uri,
        routeSet: res.headers.values('record-route').reverse(),
        localSeq: invite.cseq.seq,
        remoteSeq: undefined,
        secure: invite.uri.startsWith('sips:'),
      },
      flow,
    ), res);
  }

  /** Response headers a dialog-creating or target-refresh 2xx carries (sec. 12.1.1, 13.3.1.4). */
  answerHeaders(): Array<readonly [string, string]> {
    const h: Array<readonly [string, string]> = this.routeSet.map((r) => ['Record-Route', r] as const);
    h.push(['Contact', `<${this.host.contactUri(this.flow, this.secure)}>`]);
    return h;
  }

  /** Sends the 2xx for `sreq` and retransmits it until the ACK (sec. 13.3.1.4). */
  accept(sreq: ServerRequest, sdp: string | undefined, extraHeaders: ReadonlyArray<readonly [string, string]> = []): void {
    const res = sreq.respond(200, { headers: [...this.answerHeaders(), ...extraHeaders], ...(sdp ? { body: sdp } : {}) });
    if (res.status !== 200 || sreq.finalResponse !== res) return;
    this.awaitingAck = new AckWait(this, sreq, this.host.clock, this.host.timerValues);
  }

  private get log(): Logger {
    // Rare lines (errors, a missing ACK): a child per line is cheap enough.
    return this.callLogger ?? this.host.logger.child({ sipCallId: this.callId });
  }

  private stopAckWait(): void {
    this.awaitingAck?.stop();
    this.awaitingAck = undefined;
  }

  /** AckWaitOwner (ack-wait.ts): no ACK for our 2xx within 64*T1. Not for other callers. */
  ackTimeout(): void {
    this.awaitingAck = undefined;
    this.log.info({}, 'no ACK for our 2xx within 64*T1: ending the dialog with BYE (RFC 3261 sec. 13.3.1.4)');
    void this.bye('ack-timeout');
  }

  receiveAck(ack: SipRequest): void {
    if (this.awaitingAck && ack.cseq.seq === this.awaitingAck.seq) {
      this.stopAckWait();
      this.incomingInvite = undefined;
      if (this.state === 'early') {
        this.state = 'confirmed';
        this.emit('confirmed', { sdp: sdpBody({ body: ack.body, contentType: ack.contentType }) });
      }
    }
  }

  /** The UAS gave up before a 2xx: the early dialog ends with the transaction. */
  rejected(): void {
    this.end('rejected');
  }

  receiveRequest(sreq: ServerRequest): void {
    const req = sreq.request;
    if (this.state === 'terminated') {
      sreq.respond(481);
      return;
    }
    // RFC 3261 sec. 12.2.2: a lower CSeq than the last one is out of order.
    if (this.remoteSeq !== undefined && req.cseq.seq < this.remoteSeq) {
      sreq.respond(500, { reason: 'CSeq out of order' });
      return;
    }
    this.remoteSeq = req.cseq.seq;
    switch (req.method) {
      case 'BYE':
        sreq.respond(200);
        if (this.incomingInvite && !this.incomingInvite.answered) this.incomingInvite.respond(487);
        this.end('remote-bye');
        return;
      case 'INVITE':
      case 'UPDATE':
        // Nothing may escape as an unhandled rejection: Node ends the process on one.
        this.refresh(sreq, req.method).catch((error: unknown) => {
          this.log.error({ err: error }, 'target refresh failed');
          if (this.incomingInvite === sreq) this.incomingInvite = undefined;
          if (!sreq.answered) sreq.respond(500);
        });
        return;
      case 'INFO':
        sreq.respond(200);
        this.emit('info', { contentType: req.contentType, body: req.body.toString('utf8') });
        return;
      case 'REFER': {
        const referTo = req.headers.get('refer-to');
        if (!referTo) sreq.respond(400, { reason: 'Bad Request (REFER without Refer-To)' });
        else if (this.listenerCount('refer') === 0) sreq.respond(403, { reason: 'Transfer not enabled' });
        else this.emit('refer', { referTo, request: sreq });
        return;
      }
      case 'NOTIFY':
        // No subscription in this dialog to report on (RFC 6665 sec. 4.1.3).
        if (this.listenerCount('notify') === 0) sreq.respond(481, { reason: 'Subscription does not exist' });
        else this.emit('notify', { request: sreq });
        return;
      case 'OPTIONS':
        this.host.answerOptions(sreq);
        return;
      default:
        sreq.respond(405);
    }
  }

  /** Target refresh from the peer (sec. 14.2 re-INVITE, RFC 3311 UPDATE). */
  private async refresh(sreq: ServerRequest, method: 'INVITE' | 'UPDATE'): Promise<void> {
    const req = sreq.request;
    // Glare: our own refresh is in progress (sec. 14.2 / RFC 3311 sec. 5.2).
    if (this.localRefresh) {
      sreq.respond(491);
      return;
    }
    if (method === 'INVITE' && (this.incomingInvite || this.awaitingAck)) {
      sreq.respond(500, { headers: [['Retry-After', String(randomInt(0, 11))]] });
      return;
    }
    if (method === 'INVITE') this.incomingInvite = sreq;
    const offer = sdpBody({ body: req.body, contentType: req.contentType });
    let answer: string | undefined;
    let timer: ReturnType<RefreshObserver['check']> | undefined;
    try {
      timer = this.refreshObserver?.check(req);
      if (offer !== undefined || method === 'INVITE') {
        if (!this.offerHandler) throw new SipError(488, 'Not Acceptable Here (no media handler)');
        answer = await this.offerHandler(offer, method);
      }
    } catch (error) {
      const status = error instanceof SipError ? error.status : 500;
      if (!sreq.answered) sreq.respond(status, error instanceof SipError ? { headers: error.headers } : {});
      if (method === 'INVITE') this.incomingInvite = undefined;
      return;
    }
    if (sreq.answered || this.state === 'terminated') return;
    const contact = req.contacts[0];
    if (contact && !contact.wildcard) {
      this.remoteTarget = contact.uriText;
      this.targetIsSource = false;
    }
    if (method === 'INVITE') this.accept(sreq, answer, timer?.headers);
    else sreq.respond(200, { headers: [...this.answerHeaders(), ...(timer?.headers ?? [])], ...(answer ? { body: answer } : {}) });
    timer?.commit();
    this.emit('modify', { method, sdp: offer });
  }

  /** A request inside the dialog (sec. 12.2.1.1). */
  buildRequest(method: string, options: { body?: string; contentType?: string; headers?: ReadonlyArray<readonly [string, string]> } = {}): { req: SipRequest; flow: Flow } {
    const strict = this.routeSet.length > 0 && !/;lr\b/i.test(this.routeSet[0] ?? '');
    const firstRoute = this.routeSet[0]?.replace(/^[^<]*<([^>]*)>.*$/, '$1');
    const uri = strict && firstRoute ? firstRoute : this.remoteTarget;
    const flow = this.targetIsSource && !firstRoute ? this.flow : this.host.flowFor(firstRoute ?? this.remoteTarget, this.flow);
    const h = new Headers();
    h.append('Via', this.host.viaFor(flow, newBranch()));
    h.append('Max-Forwards', '70');
    const routes = strict ? [...this.routeSet.slice(1), `<${this.remoteTarget}>`] : this.routeSet;
    for (const r of routes) h.append('Route', r);
    h.append('From', `<${this.localUri}>;tag=${this.localTag}`);
    // No From tag from an RFC 2543 peer (RFC 4475 sec. 3.4.1): no To tag either.
    h.append('To', this.remoteTag ? `<${this.remoteUri}>;tag=${this.remoteTag}` : `<${this.remoteUri}>`);
    h.append('Call-ID', this.callId);
    if (method !== 'ACK') this.localSeq += 1;
    h.append('CSeq', `${this.localSeq} ${method}`);
    if (method === 'INVITE' || method === 'UPDATE') h.append('Contact', `<${this.host.contactUri(flow, this.secure)}>`);
    for (const [n, v] of options.headers ?? []) h.append(n, v);
    const body = options.body === undefined ? Buffer.alloc(0) : Buffer.from(options.body, 'utf8');
    if (body.length > 0) h.append('Content-Type', options.contentType ?? 'application/sdp');
    return { req: new SipRequest(method, uri, h, body), flow };
  }

  /**
   * Sends a request in this dialog; a 481 or 408 ends the dialog (sec. 12.2.1.2) unless
   * `keepOnFailure`: a session refresh that fails so must end the session with BYE (RFC 4028 sec. 10).
   */
  async request(method: string, options: Parameters<Dialog['buildRequest']>[1] & { keepOnFailure?: boolean } = {}): Promise<SipResponse> {
    if (this.state === 'terminated' && method !== 'BYE') throw new SipError(481, 'dialog terminated');
    const { req, flow } = this.buildRequest(method, options);
    const res = await this.host.request(req, flow, undefined, method === 'INVITE' ? (r) => this.ackFor(r, req, flow) : undefined);
    if ((res.status === 481 || res.status === 408) && method !== 'BYE' && options.keepOnFailure !== true) this.end('transport-error');
    return res;
  }

  /**
   * Our re-INVITE (sec. 14.1): serialised; 491 surfaces as SipError(491) for the caller to retry later.
   * `headers` and `onResponse` serve session refreshes (RFC 4028 sec. 10: Session-Expires in, 422/2xx out).
   */
  async reinvite(sdp: string, options: { headers?: ReadonlyArray<readonly [string, string]>; onResponse?: (res: SipResponse) => void } = {}): Promise<string | undefined> {
    if (this.localRefresh || this.incomingInvite || this.awaitingAck) throw new SipError(491, 'a target refresh is already in progress');
    this.localRefresh = true;
    try {
      const { req, flow } = this.buildRequest('INVITE', { body: sdp, ...(options.headers ? { headers: options.headers } : {}) });
      const res = await this.host.request(req, flow, undefined, (r) => this.ackFor(r, req, flow));
      options.onResponse?.(res);
      if (res.status >= 300) throw new SipError(res.status, res.reason);
      this.ackFor(res, req, flow);
      const contact = res.contacts[0];
      if (contact && !contact.wildcard) this.remoteTarget = contact.uriText;
      return sdpBody({ body: res.body, contentType: res.contentType });
    } finally {
      this.localRefresh = false;
    }
  }

  /** ACK for a 2xx to our INVITE (sec. 13.2.2.4): same CSeq number, new branch, resent for retransmitted 2xx. */
  ackFor(res: SipResponse, invite: SipRequest, flow: Flow): void {
    if (this.lastAck?.seq !== invite.cseq.seq) {
      const { req } = this.buildRequest('ACK');
      req.headers.replaceFirst('cseq', `${invite.cseq.seq} ACK`);
      this.lastAck = { seq: invite.cseq.seq, req };
    }
    this.host.sendStateless(this.lastAck.req, flow);
    if (this.state === 'early' && res.status < 300) {
      this.state = 'confirmed';
      this.emit('confirmed', { sdp: undefined });
    }
  }

  receiveStray2xx(res: SipResponse): void {
    if (this.lastAck && res.cseq.seq === this.lastAck.seq) this.host.sendStateless(this.lastAck.req, this.flow);
  }

  /** Ends the dialog with BYE (sec. 15.1.1); resolves once the BYE is answered or timed out. */
  async bye(reason: DialogEndReason = 'local-bye'): Promise<void> {
    if (this.state === 'terminated') return;
    this.stopAckWait();
    let req: { req: SipRequest; flow: Flow };
    try {
      req = this.buildRequest('BYE');
    } catch (error) {
      this.log.warn({ err: error }, 'cannot route BYE');
      this.end(reason);
      return;
    }
    this.end(reason);
    await this.host.request(req.req, req.flow);
  }

  end(reason: DialogEndReason): void {
    if (this.state === 'terminated') return;
    this.state = 'terminated';
    this.stopAckWait();
    this.host.dialogs.remove(this);
    this.emit('destroy', { reason });
  }
}

function withAllow(dialog: Dialog, m: SipRequest | SipResponse): Dialog {
  if (m.headers.has('allow')) dialog.remoteAllow = m.list('allow').map((x) => x.toUpperCase());
  return dialog;
}
