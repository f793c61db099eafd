import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';

/**
 * A UDP SIP callee for many calls at once that counts, per called number, the distinct calls
 * (Call-IDs) that reached it: the measure of "rang twice" in the kill -9 tests and bench. It
 * answers every INVITE 180 Ringing, then a final status after `ringMs` (486 Busy Here by
 * default), as a server transaction should (RFC 3261 sec. 17.2.1): a retransmitted INVITE gets
 * the last response again and is not counted as a new call; a final response is sent again until
 * the ACK ends the transaction; CANCEL is answered 200 and the INVITE 487 (sec. 9.2).
 *
 * SIPp would do as a callee, but at a thousand calls a second its message log (the only place it
 * says which number each call was for) slows it into retransmissions; this one only counts.
 */
export interface CountingUasOptions {
  /** How long each call rings before the final response; default 1 s. */
  readonly ringMs?: number;
  /** The final status; default 486. */
  readonly finalStatus?: number;
  /** The address to listen on; default 127.0.0.1. */
  readonly address?: string;
}

interface Pending {
  readonly request: string;
  readonly remote: RemoteInfo;
  last?: string;
  timer?: NodeJS.Timeout;
  /** Timer G: the final response again until the ACK comes (RFC 3261 sec. 17.2.1). */
  resend?: NodeJS.Timeout;
}

/** RFC 3261 sec. 17.1.1.1 defaults: Timer G starts at T1 and doubles up to T2; Timer H gives up at 64*T1. */
const T1 = 500;
const T2 = 4000;

const header = (message: string, name: string, compact?: string): string | undefined => {
  const pattern = new RegExp(`^(?:${name}${compact ? `|${compact}` : ''})[ \\t]*:[ \\t]*(.*)$`, 'im');
  return pattern.exec(message)?.[1]?.trim();
};

const allHeaders = (message: string, name: string, compact: string): string[] =>
  [...message.matchAll(new RegExp(`^(?:${name}|${compact})[ \\t]*:[ \\t]*(.*)$`, 'gim'))].map((m) => m[1]!.trim());

const reasons: Record<number, string> = { 180: 'Ringing', 200: 'OK', 403: 'Forbidden', 480: 'Temporarily Unavailable', 486: 'Busy Here', 487: 'Request Terminated', 503: 'Service Unavailable' };

export class CountingUas {
  /** Called number (To user) -> distinct Call-IDs seen for it. */
  readonly calls = new Map<string, Set<string>>();
  /** Every INVITE datagram, retransmissions included. */
  invites = 0;
  /** Called number -> INVITE datagrams for it, retransmissions included. */
  readonly datagrams = new Map<string, number>();
  /** Time of the last new call (ms since epoch). */
  lastCallAt = 0;
  /** Source address of each new call's first INVITE -> calls: who sent it (a proxy, or the platform itself). */
  readonly sources = new Map<string, number>();
  /** Host of each new call's bottom Via (the UAC that made it, behind any proxies) -> calls. */
  readonly origins = new Map<string, number>();
  private readonly pending = new Map<string, Pending>();
  private socket: Socket | undefined;
  private readonly waiters: Array<{ n: number; resolve: () => void }> = [];

  constructor(private readonly options: CountingUasOptions = {}) {}

  async start(): Promise<number> {
    const socket = createSocket('udp4');
    this.socket = socket;
    socket.on('message', (data, remote) => this.onMessage(data.toString('latin1'), remote));
    await new Promise<void>((resolve) => socket.bind(0, this.options.address ?? '127.0.0.1', resolve));
    // A burst of INVITEs must not overflow the default receive buffer (the kernel would drop them).
    try {
      socket.setRecvBufferSize(4 * 1024 * 1024);
    } catch {
      // Capped by net.core.rmem_max: our INVITE retransmissions still get through.
    }
    return socket.address().port;
  }

  async stop(): Promise<void> {
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      clearTimeout(p.resend);
    }
    this.pending.clear();
    const socket = this.socket;
    this.socket = undefined;
    if (socket) await new Promise<void>((resolve) => socket.close(() => resolve()));
  }

  /** Distinct calls seen. */
  get total(): number {
    let n = 0;
    for (const ids of this.calls.values()) n += ids.size;
    return n;
  }

  /** Numbers that got more than one call. */
  rangMoreThanOnce(): string[] {
    return [...this.calls].filter(([, ids]) => ids.size > 1).map(([number]) => number);
  }

  /** Resolves once `n` distinct calls have arrived. */
  waitForCalls(n: number): Promise<void> {
    if (this.total >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  private onMessage(message: string, remote: RemoteInfo): void {
    const method = /^([A-Z]+) \S+ SIP\/2\.0\r?\n/.exec(message)?.[1];
    const callId = header(message, 'Call-ID', 'i');
    if (!method || !callId) return;
    if (method === 'INVITE') this.onInvite(message, callId, remote);
    else if (method === 'ACK') this.finish(callId);
    else if (method === 'CANCEL') this.onCancel(message, callId, remote);
    else this.send(this.response(message, 200), remote);
  }

  private onInvite(message: string, callId: string, remote: RemoteInfo): void {
    this.invites += 1;
    const to = header(message, 'To', 't') ?? '';
    const number = /sips?:([^@;>]+)@/.exec(to)?.[1] ?? to;
    this.datagrams.set(number, (this.datagrams.get(number) ?? 0) + 1);
    const known = this.pending.get(callId);
    if (known) {
      // A retransmission (RFC 3261 sec. 17.2.1): repeat the last response.
      if (known.last) this.send(known.last, remote);
      return;
    }
    const ids = this.calls.get(number) ?? new Set<string>();
    if (!ids.has(callId)) {
      ids.add(callId);
      this.calls.set(number, ids);
      this.sources.set(remote.address, (this.sources.get(remote.address) ?? 0) + 1);
      const bottom = allHeaders(message, 'Via', 'v').flatMap((v) => v.split(',')).at(-1) ?? '';
      const origin = /SIP\/2\.0\/[A-Z]+\s+(\[[^\]]+\]|[^;:\s]+)/i.exec(bottom.trim())?.[1] ?? '';
      this.origins.set(origin, (this.origins.get(origin) ?? 0) + 1);
      this.lastCallAt = Date.now();
      const total = this.total;
      for (const w of this.waiters.splice(0)) {
        if (total >= w.n) w.resolve();
        else this.waiters.push(w);
      }
    }
    const call: Pending = { request: message, remote };
    this.pending.set(callId, call);
    this.reply(call, 180);
    call.timer = setTimeout(() => this.reply(call, this.options.finalStatus ?? 486), this.options.ringMs ?? 1_000);
  }

  private onCancel(message: string, callId: string, remote: RemoteInfo): void {
    this.send(this.response(message, 200), remote);
    const call = this.pending.get(callId);
    if (!call) return;
    clearTimeout(call.timer);
    this.reply(call, 487);
  }

  private reply(call: Pending, status: number): void {
    call.last = this.response(call.request, status, ';tag=uas1');
    this.send(call.last, call.remote);
    if (status < 300) return;
    // A final response lost on the way must come again: after a provisional the INVITE is not
    // retransmitted any more, so nothing else would bring it back (sec. 17.2.1, Timers G and H).
    const started = Date.now();
    const again = (interval: number): void => {
      call.resend = setTimeout(() => {
        if (!call.last || Date.now() - started >= 64 * T1) return;
        this.send(call.last, call.remote);
        again(Math.min(2 * interval, T2));
      }, interval);
    };
    again(T1);
  }

  /** The final response's transaction ends with the ACK; keep it a while for retransmissions anyway. */
  private finish(callId: string): void {
    const call = this.pending.get(callId);
    if (!call) return;
    clearTimeout(call.timer);
    clearTimeout(call.resend);
    setTimeout(() => this.pending.delete(callId), 32_000).unref();
  }

  private response(request: string, status: number, toTag = ''): string {
    const to = header(request, 'To', 't') ?? '';
    const lines = [
      `SIP/2.0 ${status} ${reasons[status] ?? 'Status'}`,
      ...allHeaders(request, 'Via', 'v').map((v) => `Via: ${v}`),
      `From: ${header(request, 'From', 'f') ?? ''}`,
      `To: ${to}${toTag && !/;tag=/i.test(to) ? toTag : ''}`,
      `Call-ID: ${header(request, 'Call-ID', 'i') ?? ''}`,
      `CSeq: ${header(request, 'CSeq') ?? ''}`,
      'Content-Length: 0',
      '',
      '',
    ];
    return lines.join('\r\n');
  }

  private send(text: string, remote: RemoteInfo): void {
    this.socket?.send(Buffer.from(text, 'latin1'), remote.port, remote.address);
  }
}
