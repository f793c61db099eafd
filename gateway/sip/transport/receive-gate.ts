import { performance } from 'node:perf_hooks';
import type { SipMessage } from '../message/message.js';
import { SipRequest } from '../message/message.js';
import { PeekedHead, peekedResponse } from '../message/peek.js';
import { createResponse, newTag } from '../message/response.js';
import type { Via } from '../message/via.js';
import { countResponseSent, countShed } from '../sip-metrics.js';
import { DatagramIntake, Lane, type LaneOwner } from './receive-lanes.js';
import type { Flow, Reply } from './types.js';

/** What an admission policy sees of a request before it is parsed. */
export interface ArrivingRequest {
  /** Request method as sent (case-sensitive, RFC 3261 sec. 7.1). */
  readonly method: string;
  /** The To tag: present on requests inside a dialog (sec. 12.2.1.1). */
  readonly toTag: string | undefined;
  /** The top Via, parsed (undefined when absent or malformed): a retransmission is known by it (sec. 17.2.3). */
  readonly topVia: Via | undefined;
  /** First value of a header, by lower-case long name. */
  header(key: string): string | undefined;
}

export type AdmissionDecision =
  /** `newCall`: a new INVITE; it waits behind everything else and counts against the node's capacity meanwhile. */
  | { readonly action: 'admit'; readonly newCall?: boolean }
  /** Answered at once with 503 + Retry-After (sec. 21.5.4), without a transaction (sec. 8.2.7). */
  | { readonly action: 'refuse'; readonly reason: string }
  /** Not answered at all. */
  | { readonly action: 'drop'; readonly reason: string };

/** Decides per request (ACK and responses never reach it) from its source address and peeked head. */
export interface AdmissionPolicy {
  admit(source: string, request: ArrivingRequest): AdmissionDecision;
}

export interface ReceiveGateOptions {
  readonly policy: AdmissionPolicy;
  readonly retryAfterSeconds: number;
  /** Server header of refusals. */
  readonly server: string;
  /** Messages of the new-call lane waiting per source before more are dropped. */
  readonly queuePerSource?: number;
  /** New-call lane messages handed on per source and round (see FairQueue). */
  readonly turnBudget?: number;
  /** A new INVITE that waited longer than this to be read is refused 503 instead (0 or absent: never). */
  readonly maxWaitMs?: number;
  /** Messages of the priority lane waiting before more are dropped. */
  readonly priorityLimit?: number;
  /** Monotonic milliseconds (the wait above); performance.now by default. */
  readonly now?: () => number;
}

/**
 * Our refusals' To tags start with this; tags of our dialogs are hex (response.ts newTag), so an
 * ACK carrying it can only acknowledge a refusal, which has no transaction to absorb it (sec.
 * 17.2.1 absorbs ACKs in the transaction; a stateless answer has none) and is dropped unparsed.
 */
const REFUSAL_TAG_MARK = 'rf';
const STALE = 'waited too long in the receive queue';


/**
 * Admission before the full parse: every UDP datagram is classified from its source and a peek
 * at its head, then dropped, refused with a cheap stateless 503, or queued for the parser in one
 * of two lanes (receive-lanes.ts): responses, ACKs, requests of live dialogs, OPTIONS and the
 * other non-INVITE requests in the priority lane, read first; new INVITEs (and CANCELs, which
 * must follow their INVITE) in the new-call lane, per source. So a flood costs little per
 * datagram, cannot make another source wait behind it, and never delays the calls already up.
 * Responses and ACKs are never refused (they answer or end our own transactions); everything else
 * is the policy's call. Messages on TCP, TLS and WebSocket meet the same policy after framing
 * (the framer must read the head to find where a message ends), without a queue: a connection's
 * own flow control paces it.
 */
export class ReceiveGate implements LaneOwner {
  private readonly extra: ReadonlyArray<readonly [string, string]>;
  private readonly intakes = new Set<DatagramIntake>();
  /** New INVITEs admitted and still waiting in a lane: they count against the node's capacity. */
  waitingCalls = 0;

  constructor(readonly options: ReceiveGateOptions) {
    this.extra = [['Retry-After', String(options.retryAfterSeconds)], ['Server', options.server]];
  }

  /** The intake of one datagram transport: admitted datagrams reach `deliver` through its lanes. */
  intake(deliver: (buf: Buffer, flow: Flow) => void): DatagramIntake {
    const intake = new DatagramIntake(this, deliver, {
      perSource: this.options.queuePerSource ?? 1000,
      turnBudget: this.options.turnBudget ?? 8,
      priorityLimit: this.options.priorityLimit ?? 10_000,
      maxWaitMs: this.options.maxWaitMs ?? 0,
      now: this.options.now ?? (() => performance.now()),
    });
    this.intakes.add(intake);
    return intake;
  }

  /** Messages waiting in every intake, by lane. */
  get waiting(): { readonly priority: number; readonly calls: number } {
    let priority = 0;
    let calls = 0;
    for (const i of this.intakes) {
      priority += i.waitingPriority;
      calls += i.waitingCalls;
    }
    return { priority, calls };
  }

  forget(intake: DatagramIntake): void {
    this.intakes.delete(intake);
  }

  /** Decides for a datagram: the lane it waits in, or undefined (dropped, or refused through `reply`). */
  screen(buf: Buffer, flow: Flow, reply: Reply): Lane | undefined {
    const source = flow.remote.address;
    const head = PeekedHead.of(buf);
    if (head === undefined) {
      // No start line to go by: the parser may answer 400 while the source is within its budget.
      const d = this.options.policy.admit(source, UNKNOWN);
      if (d.action === 'admit') return Lane.Calls;
      this.count('dropped', d.reason);
      return undefined;
    }
    if (head.isResponse) return Lane.Priority;
    if (head.method === 'ACK') return head.toTag?.startsWith(REFUSAL_TAG_MARK) ? undefined : Lane.Priority;
    const d = this.options.policy.admit(source, head);
    if (d.action === 'admit') return d.newCall ? Lane.NewCall : head.method === 'CANCEL' ? Lane.Calls : Lane.Priority;
    if (d.action === 'refuse' && this.refuse(head, flow, reply, d.reason)) return undefined;
    this.count('dropped', d.reason);
    return undefined;
  }

  /** A new INVITE that waited too long: 503 now, rather than a call the caller has given up on. */
  refuseStale(buf: Buffer, flow: Flow, reply: Reply): void {
    const head = PeekedHead.of(buf);
    if (!head || !this.refuse(head, flow, reply, STALE)) this.count('dropped', STALE);
  }

  /** 503 + Retry-After from the raw head, statelessly (sec. 8.2.7); false when it cannot be answered. */
  private refuse(head: PeekedHead, flow: Flow, reply: Reply, reason: string): boolean {
    const res = peekedResponse(head, flow.remote, '503 Service Unavailable', REFUSAL_TAG_MARK + newTag(), this.extra);
    if (!res) return false;
    this.count('refused', reason);
    countResponseSent(head.method, 503, flow.transport);
    try {
      reply(res.wire, res.port, flow);
    } catch {
      // The socket is closing: nothing to answer with.
    }
    return true;
  }

  /** A framed, parsed message from a connection: true when it goes on to the stack. */
  message(msg: SipMessage, flow: Flow): boolean {
    if (!(msg instanceof SipRequest) || msg.method === 'ACK') return true;
    const d = this.options.policy.admit(flow.remote.address, { method: msg.method, toTag: msg.to.tag, topVia: msg.topVia, header: (k) => msg.headers.get(k) });
    if (d.action === 'admit') return true;
    if (d.action === 'refuse') {
      this.count('refused', d.reason);
      countResponseSent(msg.method, 503, flow.transport);
      try {
        flow.send(createResponse(msg, 503, undefined, { toTag: REFUSAL_TAG_MARK + newTag(), headers: this.extra }));
      } catch {
        // The connection is gone.
      }
    } else {
      this.count('dropped', d.reason);
    }
    return false;
  }

  count(action: 'refused' | 'dropped', reason: string): void {
    countShed(action, reason);
  }
}

const UNKNOWN: ArrivingRequest = { method: '', toTag: undefined, topVia: undefined, header: () => undefined };
