import { randomBytes } from 'node:crypto';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { WebSocket } from 'ws';
import type { SipMessage, SipResponse } from '../../gateway/sip/message/message.js';
import { parseDatagram } from '../../gateway/sip/message/parser.js';
import { StreamFramer } from '../../gateway/sip/message/stream-framer.js';

/**
 * A small SIP UAC over TLS or WebSocket for the transports SIPp lacks: it writes requests as
 * text and reads whatever comes back with the stack's own parser.
 */
export class NodeUac {
  private readonly inbox: SipMessage[] = [];
  /** Every frame received, as text (WebSocket only). */
  readonly raw: string[] = [];
  private waiters: Array<() => void> = [];
  readonly callId = `${randomBytes(8).toString('hex')}@node-uac`;
  readonly fromTag = randomBytes(4).toString('hex');
  private rtp: UdpSocket | undefined;

  private constructor(
    readonly transport: 'TLS' | 'WS',
    private readonly write: (text: string) => void,
    private readonly closer: () => void,
    readonly localPort: number,
  ) {}

  static async tls(port: number, ca: Buffer): Promise<NodeUac> {
    const socket: TLSSocket = tlsConnect({ host: '127.0.0.1', port, ca });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', resolve);
      socket.once('error', reject);
    });
    const uac = new NodeUac('TLS', (t) => socket.write(t), () => socket.destroy(), socket.localPort ?? 0);
    const framer = new StreamFramer();
    socket.on('data', (chunk: Buffer) => {
      for (const item of framer.push(chunk)) if (item.kind === 'message') uac.deliver(item.message);
    });
    return uac;
  }

  /** SIP over WebSocket; `ca` makes it wss:// with that certificate trusted (web calls). */
  static async ws(port: number, ca?: Buffer): Promise<NodeUac> {
    const ws = new WebSocket(`${ca ? 'wss' : 'ws'}://127.0.0.1:${port}`, 'sip', ca ? { ca } : {});
    await new Promise<void>((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const uac = new NodeUac('WS', (t) => ws.send(t), () => ws.close(), 0);
    ws.on('message', (data: Buffer) => {
      uac.raw.push(data.toString('utf8'));
      try {
        uac.deliver(parseDatagram(Buffer.from(data)));
      } catch {
        // Kept in `raw` only: answers to malformed requests copy their malformed headers.
      }
    });
    return uac;
  }

  private deliver(m: SipMessage): void {
    this.inbox.push(m);
    for (const w of this.waiters.splice(0)) w();
  }

  /** The next message matching `pred`, within `ms`. */
  async next(pred: (m: SipMessage) => boolean, ms = 5000): Promise<SipMessage> {
    const end = Date.now() + ms;
    for (;;) {
      const i = this.inbox.findIndex(pred);
      if (i >= 0) return this.inbox.splice(i, 1)[0] as SipMessage;
      const left = end - Date.now();
      if (left <= 0) throw new Error('no matching SIP message in time');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async response(method: string, status: number): Promise<SipResponse> {
    return (await this.next((m) => !m.isRequest && m.cseq.method === method && (m as SipResponse).status === status)) as SipResponse;
  }

  send(text: string): void {
    this.write(text.replace(/\r?\n/g, '\r\n'));
  }

  private via(): string {
    const host = this.transport === 'WS' ? 'client.invalid' : '127.0.0.1';
    return `SIP/2.0/${this.transport} ${host}:${this.localPort || 5060};branch=z9hG4bK${randomBytes(6).toString('hex')};rport`;
  }

  request(method: string, uri: string, cseq: number, extra: { to?: string; body?: string; headers?: readonly string[] } = {}): void {
    const body = extra.body ?? '';
    const more = (extra.headers ?? []).map((h) => `${h}\n`).join('');
    this.send(
      `${method} ${uri} SIP/2.0\nVia: ${this.via()}\nMax-Forwards: 70\nFrom: <sip:+919800000002@client.invalid>;tag=${this.fromTag}\n` +
        `To: ${extra.to ?? `<${uri}>`}\nCall-ID: ${this.callId}\nCSeq: ${cseq} ${method}\n` +
        `Contact: <sip:caller@client.invalid;transport=${this.transport.toLowerCase()}>\nUser-Agent: node-uac\n${more}` +
        (body ? 'Content-Type: application/sdp\n' : '') +
        `Content-Length: ${Buffer.byteLength(body)}\n\n${body}`,
    );
  }

  /** An SDP offer for PCMU at a UDP socket of ours (its packets are not checked here). */
  async offer(): Promise<string> {
    this.rtp = createSocket('udp4');
    await new Promise<void>((resolve) => this.rtp?.bind(0, '127.0.0.1', resolve));
    const port = this.rtp.address().port;
    return `v=0\no=- 1 1 IN IP4 127.0.0.1\ns=-\nc=IN IP4 127.0.0.1\nt=0 0\nm=audio ${port} RTP/AVP 0 101\na=rtpmap:0 PCMU/8000\na=rtpmap:101 telephone-event/8000\na=sendrecv\n`.replace(/\n/g, '\r\n');
  }

  close(): void {
    this.closer();
    this.rtp?.close();
  }
}
