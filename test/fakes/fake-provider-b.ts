import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { FakeCallA } from './fake-provider-a.js';
import type { FakeStream, PlayoutItem } from './fake-provider-a-stream.js';

/**
 * A loopback provider B, as its public docs describe it: `POST /v1/Accounts/{sid}/Calls/connect.json`
 * with HTTP basic auth (API key : token), status callbacks (answered, terminal) as forms, and the
 * number's flow, executed applet by applet:
 * - Voicebot: asks our URL where to stream (GET with CallSid, CallFrom, CallTo, Direction,
 *   CustomField, basic auth) and opens the WebSocket with basic auth; the stream in snake_case
 *   frames with 16-bit PCM sent every 100 ms, DTMF with a duration, marks and clear. When the
 *   socket closes (not the caller's hang-up) the flow moves on to the next applet;
 * - Connect with a dynamic URL: GET with CallSid etc., the JSON answer's `destination.numbers`
 *   dialled (transfer targets ring and answer or not, `targets`); an empty list dials nobody;
 * - one sync Passthru on both of the Connect applet's exits (GET with CallType completed /
 *   incomplete, DialCallStatus, DialWhomNumber): its 200 leads to a second Voicebot applet when
 *   `flow.backToBot` (else Hangup), its 302 to Hangup;
 * - Hangup: the call completes (and the terminal status callback goes out).
 * With `flow.connect` false the flow is Voicebot -> Hangup.
 */
export interface FakeProviderBOptions {
  readonly accountSid: string;
  readonly apiKey: string;
  readonly apiToken: string;
  /** Our `/providers/b` base: the Voicebot applet's URL is `<base>/voicebot`, the Connect applet's `<base>/connect`, the Passthru's `<base>/transfer-ended`. */
  flowBaseUrl?: string;
}

export type CalleeB = { readonly kind: 'answer' } | { readonly kind: 'busy' | 'no-answer' | 'failed' };
export type TransferTargetB = { readonly kind: 'answer'; readonly talkMs: number } | { readonly kind: 'busy' | 'no-answer' };
export interface FakeFlowB {
  /** A Connect applet (dynamic URL) and Passthrus follow the Voicebot applet. */
  connect: boolean;
  /** After a dial nobody answered, the Passthru's 200 leads back to a Voicebot applet. */
  backToBot: boolean;
}

class FakeStreamB implements FakeStream {
  readonly streamSid = `MZ${randomBytes(16).toString('hex')}`;
  readonly ws: WebSocket;
  closedBy: 'stop' | 'dropped' | 'remote' | undefined;
  closeCode: number | undefined;
  refusedWith: number | undefined;
  readonly closed: Promise<void>;
  private started = false;
  private chunk: Int16Array[] = [];
  private seq = 1;

  constructor(url: string, auth: string, start: Record<string, unknown>, private readonly sink: { playout: PlayoutItem[]; onClear(): void }) {
    this.ws = new WebSocket(url, { headers: { Authorization: auth } });
    this.ws.once('unexpected-response', (_req, res) => (this.refusedWith = res.statusCode));
    this.ws.on('error', () => undefined);
    this.closed = new Promise((resolve) => this.ws.once('close', (code) => {
      this.closeCode = code;
      this.closedBy ??= 'remote';
      resolve();
    }));
    this.ws.once('open', () => {
      this.send({ event: 'connected' });
      this.send({ event: 'start', sequence_number: String(this.seq++), stream_sid: this.streamSid, start: { stream_sid: this.streamSid, ...start, media_format: { encoding: 'audio/x-raw', sample_rate: '8000', bit_rate: '16' } } });
      this.started = true;
    });
    this.ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { event: string; stream_sid: string; media?: { payload: string }; mark?: { name: string } };
      if (msg.stream_sid !== this.streamSid) throw new Error(`frame for ${msg.stream_sid}`);
      if (msg.event === 'media' && msg.media) {
        const bytes = Buffer.from(msg.media.payload, 'base64');
        if (bytes.length % 320 !== 0) throw new Error(`agent audio of ${bytes.length} bytes is not a multiple of 320`);
        for (let i = 0; i < bytes.length; i += 320) this.sink.playout.push({ frame: Int16Array.from({ length: 160 }, (_, k) => bytes.readInt16LE(i + 2 * k)) });
      } else if (msg.event === 'mark' && msg.mark) this.sink.playout.push({ mark: msg.mark.name });
      else if (msg.event === 'clear') {
        const dropped = this.sink.playout.splice(0);
        this.sink.onClear();
        for (const item of dropped) if ('mark' in item) this.markEcho(item.mark);
      }
    });
  }

  get open(): boolean {
    return this.started && this.ws.readyState === WebSocket.OPEN;
  }

  /** Caller audio goes out in 100 ms chunks (five 20 ms frames), as the provider sends it. */
  media(frame: Int16Array): void {
    if (!this.open) return;
    this.chunk.push(frame);
    if (this.chunk.length < 5) return;
    const bytes = Buffer.alloc(this.chunk.length * 320);
    this.chunk.forEach((f, i) => f.forEach((s, k) => bytes.writeInt16LE(s, i * 320 + 2 * k)));
    this.chunk = [];
    this.send({ event: 'media', sequence_number: String(this.seq++), stream_sid: this.streamSid, media: { chunk: String(this.seq), timestamp: String(Date.now()), payload: bytes.toString('base64') } });
  }

  dtmf(digit: string): void {
    if (this.open) this.send({ event: 'dtmf', sequence_number: String(this.seq++), stream_sid: this.streamSid, dtmf: { digit, duration: '120' } });
  }

  markEcho(name: string): void {
    if (this.open) this.send({ event: 'mark', sequence_number: String(this.seq++), stream_sid: this.streamSid, mark: { name } });
  }

  stop(): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.closedBy = 'stop';
    this.send({ event: 'stop', sequence_number: String(this.seq++), stream_sid: this.streamSid });
    this.ws.close(1000);
  }

  drop(): void {
    this.closedBy = 'dropped';
    this.ws.terminate();
  }

  raw(text: string | Buffer): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(text);
  }

  private send(value: unknown): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(value));
  }
}

export class FakeProviderB {
  readonly calls = new Map<string, FakeCallA>();
  readonly callees = new Map<string, CalleeB>();
  /** How a transfer target behaves, by number (default: answers, talks 300 ms). */
  readonly targets = new Map<string, TransferTargetB>();
  readonly flow: FakeFlowB = { connect: true, backToBot: true };
  readonly requests: { path: string; form: URLSearchParams; status: number }[] = [];
  /** The flow's Connect and Passthru requests, and what we answered. */
  readonly flowRequests: { applet: 'connect' | 'passthru'; callSid: string; query: URLSearchParams; status: number; body: string; at: number }[] = [];
  readonly webhookFailures: { url: string; status: number }[] = [];
  /** The CustomField each call's applets are given (campaign calls). */
  private readonly customFields = new Map<string, string>();
  onOutboundCall: ((call: FakeCallA) => void) | undefined;
  apiBaseUrl = '';
  private server: Server | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly o: FakeProviderBOptions) {}

  private get auth(): string {
    return `Basic ${Buffer.from(`${this.o.apiKey}:${this.o.apiToken}`).toString('base64')}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.onRest(req, res));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.apiBaseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    const t0 = performance.now();
    let n = 0;
    const loop = (): void => {
      for (const call of this.calls.values()) if (!call.endedWith) call.tick();
      n++;
      this.timer = setTimeout(loop, Math.max(0, t0 + n * 20 - performance.now()));
    };
    loop();
    return this;
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    for (const call of this.calls.values()) call.stream?.drop();
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }

  async placeInbound(from: string, to: string): Promise<FakeCallA> {
    const call = new FakeCallA(randomBytes(16).toString('hex'), from, to, 'incoming');
    this.calls.set(call.sid, call);
    await this.voicebot(call);
    return call;
  }

  /** The caller hangs up: the stream stops and the call completes. */
  hangup(call: FakeCallA): void {
    call.stream?.stop('', call.sid);
    this.complete(call, 'completed');
  }

  /** The applets' query: the call's details (and its CustomField, for campaign calls). */
  private query(call: FakeCallA, extra: Record<string, string> = {}): URLSearchParams {
    const custom = this.customFields.get(call.sid);
    return new URLSearchParams({ CallSid: call.sid, CallFrom: call.from, CallTo: call.to, Direction: call.direction, CallStatus: 'in-progress', ...(custom ? { CustomField: custom } : {}), ...extra });
  }

  /** The flow reaches a Voicebot applet: ask our URL where to stream, then stream; `second` is the one after a failed dial. */
  private async voicebot(call: FakeCallA, second = false): Promise<void> {
    const url = `${this.o.flowBaseUrl}/voicebot?${this.query(call)}`;
    const res = await fetch(url, { headers: { Authorization: this.auth } });
    if (!res.ok) {
      this.webhookFailures.push({ url, status: res.status });
      return this.complete(call, 'failed');
    }
    const { url: streamUrl } = (await res.json()) as { url: string };
    const stream = new FakeStreamB(streamUrl, this.auth, { call_sid: call.sid, account_sid: this.o.accountSid, from: call.from, to: call.to, custom_parameters: {} }, { playout: call.playout, onClear: () => call.clears++ });
    call.stream = stream;
    call.streams.push(stream);
    call.answeredAt ||= Date.now();
    void stream.closed.then(() => this.afterVoicebot(call, stream, second));
  }

  /** The Voicebot applet ended: the caller's hang-up ends the call, otherwise the flow goes on. */
  private async afterVoicebot(call: FakeCallA, stream: FakeStreamB, second: boolean): Promise<void> {
    if (call.endedWith || stream.closedBy === 'stop') return;
    call.stream = undefined;
    if (!this.flow.connect || second) return this.complete(call, 'completed');
    const connect = await this.flowGet(call, 'connect', this.query(call));
    let answer: { destination?: { numbers?: string[] }; max_ringing_duration?: number } = {};
    try {
      answer = JSON.parse(connect.body) as typeof answer;
    } catch {
      this.webhookFailures.push({ url: `${this.o.flowBaseUrl}/connect`, status: connect.status });
    }
    const target = answer.destination?.numbers?.[0];
    const behaviour = target ? (this.targets.get(target) ?? { kind: 'answer', talkMs: 300 }) : undefined;
    let outcome: Record<string, string> = { CallType: 'incomplete' };
    if (target && behaviour) {
      call.dialled.push({ target, result: behaviour.kind === 'answer' ? 'answered' : behaviour.kind });
      await sleep(150);
      if (behaviour.kind === 'answer') {
        // The caller talks with the target; the applet's answered exit is taken when they are done.
        await sleep(behaviour.talkMs);
        outcome = { CallType: 'completed', DialCallStatus: 'completed', DialWhomNumber: target, DialCallDuration: String(Math.round(behaviour.talkMs / 1000)) };
      } else outcome = { CallType: 'incomplete', DialCallStatus: behaviour.kind, DialWhomNumber: target };
    }
    // Both of the Connect applet's exits lead to the same sync Passthru, whose answer picks the next applet.
    const passthru = await this.flowGet(call, 'passthru', this.query(call, outcome));
    if (passthru.status === 200 && this.flow.backToBot) return this.voicebot(call, true);
    this.complete(call, 'completed');
  }

  private async flowGet(call: FakeCallA, applet: 'connect' | 'passthru', query: URLSearchParams): Promise<{ status: number; body: string }> {
    const url = `${this.o.flowBaseUrl}/${applet === 'connect' ? 'connect' : 'transfer-ended'}?${query}`;
    const at = Date.now();
    const res = await fetch(url, { headers: { Authorization: this.auth }, redirect: 'manual' });
    const body = await res.text();
    this.flowRequests.push({ applet, callSid: call.sid, query, status: res.status, body, at });
    if (res.status !== 200 && !(applet === 'passthru' && res.status === 302)) this.webhookFailures.push({ url, status: res.status });
    return { status: res.status, body };
  }

  private complete(call: FakeCallA, status: string): void {
    if (call.endedWith) return;
    call.end(status);
    if (call.statusCallback) void this.callback(call, { Status: status, EventType: 'terminal' });
  }

  private async callback(call: FakeCallA, fields: Record<string, string>): Promise<void> {
    const res = await fetch(call.statusCallback as string, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ CallSid: call.sid, DateUpdated: new Date().toISOString(), ...fields }).toString() });
    if (!res.ok) this.webhookFailures.push({ url: call.statusCallback as string, status: res.status });
  }

  private async onRest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const answer = (status: number, body: unknown): void => {
      this.requests.push({ path, form, status });
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.headers.authorization !== this.auth) return answer(401, { RestException: { Status: 401, Message: 'Authentication is required to view this page.' } });
    if (req.method !== 'POST' || path !== `/v1/Accounts/${this.o.accountSid}/Calls/connect.json`) return answer(404, { RestException: { Status: 404, Message: 'Not Found' } });
    const [to, callerId, flow] = [form.get('From'), form.get('CallerId'), form.get('Url')];
    if (!to || !callerId || !flow) return answer(400, { RestException: { Status: 400, Message: 'From, CallerId and Url are required' } });
    const call = new FakeCallA(randomBytes(16).toString('hex'), callerId, to, 'outbound-dial');
    call.statusCallback = form.get('StatusCallback') ?? undefined;
    this.calls.set(call.sid, call);
    answer(200, { Call: { Sid: call.sid, Status: 'in-progress', From: to, To: callerId, Direction: 'outbound-api' } });
    this.onOutboundCall?.(call);
    const callee = this.callees.get(to) ?? { kind: 'answer' };
    await new Promise((r) => setTimeout(r, 150));
    if (callee.kind !== 'answer') return this.complete(call, callee.kind);
    if (call.statusCallback) await this.callback(call, { Status: 'in-progress', EventType: 'answered' });
    const custom = form.get('CustomField');
    if (custom) this.customFields.set(call.sid, custom);
    await this.voicebot(call);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
