import { createSocket, type Socket } from 'node:dgram';
import type { SipMessage, SipResponse } from '../../gateway/sip/message/message.js';
import { parseDatagram } from '../../gateway/sip/message/parser.js';

/** A raw UDP peer: writes SIP text, keeps what comes back (parsed where it parses). */
export class UdpPeer {
  readonly got: Array<{ text: string; msg?: SipMessage }> = [];
  private constructor(readonly socket: Socket) {}
  static async open(address = '127.0.0.1'): Promise<UdpPeer> {
    const s = createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, address, r));
    const p = new UdpPeer(s);
    s.on('message', (buf) => {
      let msg: SipMessage | undefined;
      try {
        msg = parseDatagram(buf);
      } catch {
        msg = undefined;
      }
      p.got.push({ text: buf.toString(), ...(msg ? { msg } : {}) });
    });
    return p;
  }
  get port(): number {
    return this.socket.address().port;
  }
  send(port: number, text: string): void {
    this.socket.send(Buffer.from(text.replace(/\r?\n/g, '\r\n')), port, '127.0.0.1');
  }
  async wait(pred: (e: { text: string; msg?: SipMessage }) => boolean, ms = 2000): Promise<{ text: string; msg?: SipMessage }> {
    const end = Date.now() + ms;
    for (;;) {
      const hit = this.got.find(pred);
      if (hit) return hit;
      if (Date.now() > end) throw new Error(`nothing matching in ${ms} ms; got: ${this.got.map((g) => g.text.split('\r\n')[0]).join(' | ')}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  responses(status: number, method: string): SipResponse[] {
    return this.got.flatMap((g) => (g.msg && !g.msg.isRequest && (g.msg as SipResponse).status === status && g.msg.cseq.method === method ? [g.msg as SipResponse] : []));
  }
  close(): void {
    this.socket.close();
  }
}

export const statusLine = (n: number) => (e: { text: string }): boolean => e.text.startsWith(`SIP/2.0 ${n} `);

/** A request from `peer` as text (LF line ends; `send` turns them into CRLF). */
export function sipRequest(
  peer: UdpPeer,
  method: string,
  opts: { uri?: string; cseq?: string; extra?: string; toTag?: string; callId?: string; branch?: string; body?: string } = {},
): string {
  const body = opts.body ?? '';
  const host = peer.socket.address().address;
  return (
    `${method} ${opts.uri ?? 'sip:svc@127.0.0.1'} SIP/2.0\nVia: SIP/2.0/UDP ${host}:${peer.port};branch=${opts.branch ?? `z9hG4bK${Math.random().toString(36).slice(2)}`};rport\n` +
    `Max-Forwards: 70\nFrom: <sip:peer@${host}>;tag=peer1\nTo: <${opts.uri ?? 'sip:svc@127.0.0.1'}>${opts.toTag ? `;tag=${opts.toTag}` : ''}\n` +
    `Call-ID: ${opts.callId ?? 'c1'}\nCSeq: ${opts.cseq ?? `1 ${method}`}\nContact: <sip:peer@${host}:${peer.port}>\n${opts.extra ?? ''}` +
    (body ? 'Content-Type: application/sdp\n' : '') +
    `Content-Length: ${Buffer.byteLength(body)}\n\n${body}`
  );
}
