import type { SipMessage } from '../message/message.js';
import { SipRequest } from '../message/message.js';
import { PeekedHead, peekedResponse } from '../message/peek.js';
import { createResponse, newTag } from '../message/response.js';
import { countResponseSent, countShed } from '../sip-metrics.js';
import { FairQueue } from './fair-queue.js';
import type { Flow } from './types.js';

/** What an admission policy sees of a request before it is parsed. */
export interface ArrivingRequest {
  /** Request method as sent (case-sensitive, RFC 3261 sec. 7.1). */
  readonly method: string;
  /** The To tag: present on requests inside a dialog (sec. 12.2.1.1). */
  readonly toTag: string | undefined;
  /** First value of a header, by lower-case long name. */
  header(key: string): string | undefined;
}

export type AdmissionDecision =
  | { readonly action: 'admit' }
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
  /** Admitted datagrams waiting per source before more are dropped. */
  readonly queuePerSource?: number;
  /** Datagrams handed on per source and round (see FairQueue). */
  readonly turnBudget?: number;
}

/**
 * Our refusals' To tags start with this; tags of our dialogs are hex (response.ts newTag), so an
 * ACK carrying it can only acknowledge a refusal, which has no transaction to absorb it (sec.
 * 17.2.1 absorbs ACKs in the transaction; a stateless answer has none) and is dropped unparsed.
 */
const REFUSAL_TAG_MARK = 'rf';

/** Sends octets to the flow's remote address at `port` (sec. 18.2.2 picks it). */
export type Reply = (wire: Buffer, port: number, flow: Flow) => void;

interface Arrival {
  readonly buf: Buffer;
  readonly flow: Flow;
}

/**
 * Admission before the full parse: every UDP datagram is classified from its source and a peek
 * at its head, then dropped, refused with a cheap stateless 503, or queued for the parser in a
 * per-source FairQueue, so a flood costs little per datagram and cannot make another source wait
 * behind it. Responses and ACKs are never refused (they answer or end our own transactions);
 * everything else is the policy's call. Messages on TCP, TLS and WebSocket meet the same policy
 * after framing (the framer must read the head to find where a message ends), without a queue:
 * a connection's own flow control paces it.
 */
export class ReceiveGate {
  private readonly extra: ReadonlyArray<readonly [string, string]>;

  constructor(private readonly options: ReceiveGateOptions) {
    this.extra = [['Retry-After', String(options.retryAfterSeconds)], ['Server', options.server]];
  }

  /** The intake of one datagram transport: admitted datagrams reach `deliver` through its own FairQueue. */
  intake(deliver: (buf: Buffer, flow: Flow) => void): DatagramIntake {
    return new DatagramIntake(this, new FairQueue((a: Arrival) => deliver(a.buf, a.flow), { perSource: this.options.queuePerSource ?? 1000, turnBudget: this.options.turnBudget ?? 8 }));
  }

  /** Decides for a datagram: true when it goes on to the parser; refusals leave through `reply`. */
  screen(buf: Buffer, flow: Flow, reply: Reply): boolean {
    const source = flow.remote.address;
    const head = PeekedHead.of(buf);
    if (head === undefined) {
      // No start line to go by: the parser may answer 400 while the source is within its budget.
      const d = this.options.policy.admit(source, UNKNOWN);
      if (d.action === 'admit') return true;
      this.count('dropped', d.reason);
      return false;
    }
    if (head.isResponse) return true;
    if (head.method === 'ACK') return !head.toTag?.startsWith(REFUSAL_TAG_MARK);
    const d = this.options.policy.admit(source, head);
    if (d.action === 'admit') return true;
    if (d.action === 'refuse') {
      const res = peekedResponse(head, flow.remote, '503 Service Unavailable', REFUSAL_TAG_MARK + newTag(), this.extra);
      if (res) {
        this.count('refused', d.reason);
        countResponseSent(head.method, 503, flow.transport);
        try {
          reply(res.wire, res.port, flow);
        } catch {
          // The socket is closing: nothing to answer with.
        }
        return false;
      }
    }
    this.count('dropped', d.reason);
    return false;
  }

  /** A framed, parsed message from a connection: true when it goes on to the stack. */
  message(msg: SipMessage, flow: Flow): boolean {
    if (!(msg instanceof SipRequest) || msg.method === 'ACK') return true;
    const d = this.options.policy.admit(flow.remote.address, { method: msg.method, toTag: msg.to.tag, header: (k) => msg.headers.get(k) });
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

/** One datagram transport's way in: the gate's decision, then the per-source queue to the parser. */
export class DatagramIntake {
  constructor(
    private readonly gate: ReceiveGate,
    private readonly queue: FairQueue<Arrival>,
  ) {}

  receive(buf: Buffer, flow: Flow, reply: Reply): void {
    if (!this.gate.screen(buf, flow, reply)) return;
    if (!this.queue.push(flow.remote.address, { buf, flow })) this.gate.count('dropped', 'source queue full');
  }

  stop(): void {
    this.queue.stop();
  }
}

const UNKNOWN: ArrivingRequest = { method: '', toTag: undefined, header: () => undefined };

