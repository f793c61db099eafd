import { randomBytes } from 'node:crypto';
import { WebSocket } from 'ws';
import { pcmu } from '../../media/codecs/g711.js';
import { signatureA } from '../../control-api/features/providers/provider-a/signature.js';

/**
 * The provider side of one provider A media stream, as the public Media Streams reference
 * describes it: a WebSocket client whose handshake carries `X-Twilio-Signature` (the stream URL
 * signed with the Auth Token), then `connected`, `start`, a `media` frame of caller audio every
 * 20 ms (base64 mu-law, real time), `dtmf` on key presses and `stop` at the end. What it receives
 * plays out of a buffer in real time: agent `media` frames are heard 20 ms each, our `mark`
 * comes back once the audio before it has played, and `clear` drops the buffer and returns the
 * marks still in it at once.
 */
export interface StreamStartInfo {
  readonly url: string;
  readonly authToken: string;
  readonly accountSid: string;
  readonly callSid: string;
  readonly parameters: Readonly<Record<string, string>>;
}

export type PlayoutItem = { readonly frame: Int16Array } | { readonly mark: string };

/** What a fake call does with its provider's stream, whichever provider's frames it speaks. */
export interface FakeStream {
  readonly streamSid: string;
  readonly open: boolean;
  readonly closed: Promise<void>;
  closedBy: 'stop' | 'dropped' | 'remote' | undefined;
  closeCode: number | undefined;
  refusedWith: number | undefined;
  media(frame: Int16Array): void;
  dtmf(digit: string): void;
  markEcho(name: string): void;
  stop(accountSid: string, callSid: string): void;
  drop(): void;
  raw(text: string | Buffer): void;
}

export class FakeStreamA implements FakeStream {
  readonly streamSid = `MZ${randomBytes(16).toString('hex')}`;
  readonly ws: WebSocket;
  /** Why the socket closed: `stop` (we stopped it), `dropped` (we cut it), or `remote` (the platform closed it). */
  closedBy: 'stop' | 'dropped' | 'remote' | undefined;
  /** The handshake was refused with this HTTP status. */
  refusedWith: number | undefined;
  readonly opened: Promise<boolean>;
  readonly closed: Promise<void>;
  closeCode: number | undefined;
  private seq = 1;
  private chunk = 1;
  private started = false;
  private readonly t0 = Date.now();

  constructor(
    info: StreamStartInfo,
    private readonly sink: { readonly playout: PlayoutItem[]; onMarkEchoed(name: string): void; onClear(): void; onRaw(text: string): void },
  ) {
    this.ws = new WebSocket(info.url, { headers: { 'X-Twilio-Signature': signatureA(info.authToken, info.url) } });
    this.opened = new Promise((resolve) => {
      this.ws.once('open', () => resolve(true));
      this.ws.once('unexpected-response', (_req, res) => {
        this.refusedWith = res.statusCode;
        resolve(false);
      });
      this.ws.once('error', () => resolve(false));
    });
    this.closed = new Promise((resolve) => this.ws.once('close', (code) => {
      this.closeCode = code;
      this.closedBy ??= 'remote';
      resolve();
    }));
    this.ws.on('message', (data) => this.onMessage(data.toString()));
    void this.opened.then((ok) => {
      if (!ok) {
        this.closedBy ??= 'remote';
        return;
      }
      this.sendJson({ event: 'connected', protocol: 'Call', version: '1.0.0' });
      this.sendJson({
        event: 'start',
        sequenceNumber: String(this.seq++),
        streamSid: this.streamSid,
        start: {
          streamSid: this.streamSid,
          accountSid: info.accountSid,
          callSid: info.callSid,
          tracks: ['inbound'],
          customParameters: info.parameters,
          mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        },
      });
      this.started = true;
    });
  }

  get open(): boolean {
    return this.started && this.ws.readyState === WebSocket.OPEN;
  }

  /** One 20 ms frame of caller audio. */
  media(frame: Int16Array): void {
    if (!this.open) return;
    const payload = Buffer.alloc(frame.length);
    pcmu.encode(frame, payload);
    this.sendJson({ event: 'media', sequenceNumber: String(this.seq++), streamSid: this.streamSid, media: { track: 'inbound', chunk: String(this.chunk++), timestamp: String(Date.now() - this.t0), payload: payload.toString('base64') } });
  }

  dtmf(digit: string): void {
    if (this.open) this.sendJson({ event: 'dtmf', streamSid: this.streamSid, sequenceNumber: String(this.seq++), dtmf: { track: 'inbound_track', digit } });
  }

  markEcho(name: string): void {
    if (this.open) this.sendJson({ event: 'mark', sequenceNumber: String(this.seq++), streamSid: this.streamSid, mark: { name } });
  }

  /** The provider ends the stream: `stop`, then close. */
  stop(accountSid: string, callSid: string): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.closedBy = 'stop';
    this.sendJson({ event: 'stop', sequenceNumber: String(this.seq++), streamSid: this.streamSid, stop: { accountSid, callSid } });
    this.ws.close(1000);
  }

  /** The connection breaks without a `stop` (network loss). */
  drop(): void {
    this.closedBy = 'dropped';
    this.ws.terminate();
  }

  /** Any text frame, as is (malformed-frame tests). */
  raw(text: string | Buffer): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(text);
  }

  private sendJson(value: unknown): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(value));
  }

  private onMessage(text: string): void {
    this.sink.onRaw(text);
    const msg = JSON.parse(text) as { event: string; streamSid?: string; media?: { payload: string }; mark?: { name: string } };
    if (msg.streamSid !== this.streamSid) throw new Error(`frame for stream ${msg.streamSid}, not ${this.streamSid}`);
    if (msg.event === 'media' && msg.media) {
      const bytes = Buffer.from(msg.media.payload, 'base64');
      for (let i = 0; i < bytes.length; i += 160) this.sink.playout.push({ frame: pcmu.decode(bytes.subarray(i, i + 160)) });
    } else if (msg.event === 'mark' && msg.mark) {
      this.sink.playout.push({ mark: msg.mark.name });
    } else if (msg.event === 'clear') {
      const dropped = this.sink.playout.splice(0);
      this.sink.onClear();
      for (const item of dropped) if ('mark' in item) this.markEcho(item.mark);
    }
  }
}
