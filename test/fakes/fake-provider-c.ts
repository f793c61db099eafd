import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { XMLParser } from 'fast-xml-parser';
import { WebSocket } from 'ws';
import { pcmu } from '../../media/codecs/g711.js';
import { signatureC } from '../../control-api/features/providers/provider-c/account.js';
import { FakeCallA } from './fake-provider-a.js';
import type { FakeStream, PlayoutItem } from './fake-provider-a-stream.js';

/**
 * A loopback provider C on the XML-and-stream protocol of its public docs: `POST
 * /v1/Account/{id}/Call/` (JSON, basic auth, 201 with `request_uuid`), `DELETE .../Call/{uuid}/`
 * and `.../Request/{uuid}/`; signed V2 webhooks (answer, ring, hangup URLs); `<Stream
 * bidirectional>` executed: a WebSocket with `start`, 20 ms mu-law `media`, `dtmf`, our
 * `playAudio` played in real time, `checkpoint` answered `playedStream` when reached,
 * `clearAudio` answered `clearedAudio`; the socket closing ends the call (keepCallAlive); a
 * transfer (`POST .../Call/{uuid}/` with `aleg_url`) fetches new instructions and runs `<Dial>`.
 */
export type CalleeC = { readonly kind: 'answer' } | { readonly kind: 'busy' | 'no-answer' | 'failed' };

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', parseTagValue: false });

class FakeStreamC implements FakeStream {
  readonly streamSid = randomUUID();
  readonly ws: WebSocket;
  closedBy: 'stop' | 'dropped' | 'remote' | undefined;
  closeCode: number | undefined;
  refusedWith: number | undefined;
  readonly closed: Promise<void>;
  private started = false;
  private seq = 1;

  constructor(url: string, callId: string, accountId: string, private readonly sink: { playout: PlayoutItem[]; onClear(): void }) {
    this.ws = new WebSocket(url);
    this.ws.once('unexpected-response', (_req, res) => (this.refusedWith = res.statusCode));
    this.ws.on('error', () => undefined);
    this.closed = new Promise((resolve) => this.ws.once('close', (code) => {
      this.closeCode = code;
      this.closedBy ??= 'remote';
      resolve();
    }));
    this.ws.once('open', () => {
      this.send({ event: 'start', sequenceNumber: this.seq++, start: { callId, streamId: this.streamSid, accountId, tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000 } } });
      this.started = true;
    });
    this.ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { event: string; streamId?: string; name?: string; media?: { payload: string; contentType: string; sampleRate: number } };
      if (msg.event === 'playAudio' && msg.media) {
        if (msg.media.contentType !== 'audio/x-mulaw' || msg.media.sampleRate !== 8000) throw new Error(`playAudio of ${msg.media.contentType} ${msg.media.sampleRate}`);
        const bytes = Buffer.from(msg.media.payload, 'base64');
        for (let i = 0; i < bytes.length; i += 160) this.sink.playout.push({ frame: pcmu.decode(bytes.subarray(i, i + 160)) });
        return;
      }
      if (msg.streamId !== this.streamSid) throw new Error(`frame for ${msg.streamId}`);
      if (msg.event === 'checkpoint' && msg.name) this.sink.playout.push({ mark: msg.name });
      else if (msg.event === 'clearAudio') {
        this.sink.playout.splice(0);
        this.sink.onClear();
        this.send({ event: 'clearedAudio', sequenceNumber: this.seq++, streamId: this.streamSid });
      }
    });
  }

  get open(): boolean {
    return this.started && this.ws.readyState === WebSocket.OPEN;
  }

  media(frame: Int16Array): void {
    if (!this.open) return;
    const payload = Buffer.alloc(frame.length);
    pcmu.encode(frame, payload);
    this.send({ event: 'media', sequenceNumber: this.seq++, streamId: this.streamSid, media: { track: 'inbound', timestamp: String(Date.now()), chunk: this.seq, payload: payload.toString('base64') } });
  }

  dtmf(digit: string): void {
    if (this.open) this.send({ event: 'dtmf', sequenceNumber: this.seq++, streamId: this.streamSid, dtmf: { digit } });
  }

  markEcho(name: string): void {
    if (this.open) this.send({ event: 'playedStream', sequenceNumber: this.seq++, streamId: this.streamSid, name });
  }

  /** C's stream has no stop frame: the call ending closes the socket. */
  stop(): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.closedBy = 'stop';
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

export class FakeProviderC {
  readonly calls = new Map<string, FakeCallA>();
  readonly callees = new Map<string, CalleeC>();
  readonly requests: { method: string; path: string; body: Record<string, unknown>; status: number }[] = [];
  readonly webhookFailures: { url: string; status: number }[] = [];
  onOutboundCall: ((call: FakeCallA) => void) | undefined;
  apiBaseUrl = '';
  private server: Server | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly hangupUrls = new Map<FakeCallA, string>();
  /** Streams closed because a transfer moved the call to other instructions. */
  private readonly moved = new WeakSet<FakeStream>();
  /** How a transfer target behaves (default: answers, bridged 300 ms). */
  readonly targets = new Map<string, { readonly kind: 'answer'; readonly bridgeMs: number } | { readonly kind: 'busy' | 'no-answer' | 'failed' }>();

  constructor(readonly o: { readonly apiKey: string; readonly apiToken: string; answerUrl?: string }) {}

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
    const call = new FakeCallA(randomUUID(), from, to, 'inbound');
    this.calls.set(call.sid, call);
    await this.execute(call, await this.webhook(this.o.answerUrl as string, call, { CallStatus: 'in-progress' }));
    return call;
  }

  /** The caller hangs up: the socket closes and the call completes. */
  hangup(call: FakeCallA): void {
    call.stream?.stop('', call.sid);
  }

  /** A signed V2 webhook (nonce + URL without its query, HMAC-SHA256 with the API Token). */
  async webhook(url: string, call: FakeCallA, extra: Record<string, string>): Promise<string> {
    const nonce = randomBytes(10).toString('hex');
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-plivo-signature-v2': signatureC(this.o.apiToken, url, nonce), 'x-plivo-signature-v2-nonce': nonce },
      body: new URLSearchParams({ CallUUID: call.sid, From: call.from, To: call.to, Direction: call.direction, ...extra }).toString(),
    });
    const body = await res.text();
    if (!res.ok) this.webhookFailures.push({ url, status: res.status });
    return res.ok ? body : '';
  }

  private async execute(call: FakeCallA, doc: string): Promise<void> {
    const response = (doc ? (xml.parse(doc) as { Response?: Record<string, unknown> }).Response : undefined) ?? {};
    if (response.Dial) return this.dial(call, response.Dial as Record<string, unknown>);
    const stream = response.Stream as { '#text': string; bidirectional?: string } | undefined;
    if (!stream || stream.bidirectional !== 'true') return this.complete(call, 'completed');
    const s = new FakeStreamC(stream['#text'], call.sid, this.o.apiKey, { playout: call.playout, onClear: () => call.clears++ });
    call.stream = s;
    call.streams.push(s);
    call.answeredAt = Date.now();
    // keepCallAlive: the call lasts as long as the socket, unless a transfer moved it on.
    void s.closed.then(() => !this.moved.has(s) && this.complete(call, 'completed'));
  }

  /** A `<Dial>`: the target (by `targets`, default answering and bridged 300 ms) is rung. */
  private async dial(call: FakeCallA, dial: Record<string, unknown>): Promise<void> {
    const noun = (dial.Number ?? dial.User) as string;
    const behaviour = this.targets.get(noun) ?? { kind: 'answer', bridgeMs: 300 };
    await new Promise((r) => setTimeout(r, 150));
    if (behaviour.kind === 'answer') {
      if (typeof dial.callbackUrl === 'string') await this.webhook(dial.callbackUrl, call, { DialAction: 'answer', DialBLegTo: noun });
      call.dialled.push({ target: noun, result: 'answered' });
      await new Promise((r) => setTimeout(r, behaviour.bridgeMs));
    } else call.dialled.push({ target: noun, result: behaviour.kind });
    const next = typeof dial.action === 'string' ? await this.webhook(dial.action, call, { DialStatus: behaviour.kind === 'answer' ? 'completed' : behaviour.kind }) : '';
    await this.execute(call, next);
  }

  private complete(call: FakeCallA, status: string, cause?: string): void {
    if (call.endedWith) return;
    call.end(status);
    const url = this.hangupUrls.get(call);
    if (url) void this.webhook(url, call, { CallStatus: status, ...(cause ? { HangupCauseName: cause } : {}) });
  }

  private async onRest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const answer = (status: number, out?: unknown): void => {
      this.requests.push({ method: req.method ?? '', path, body, status });
      res.writeHead(status, out ? { 'content-type': 'application/json' } : {}).end(out ? JSON.stringify(out) : undefined);
    };
    if (req.headers.authorization !== `Basic ${Buffer.from(`${this.o.apiKey}:${this.o.apiToken}`).toString('base64')}`) return answer(401, { api_id: randomUUID(), error: 'Authentication credentials invalid' });
    const base = `/v1/Account/${this.o.apiKey}`;
    const ended = /\/(Call|Request)\/([^/]+)\/$/.exec(path);
    if (req.method === 'DELETE' && ended) {
      const call = [...this.calls.values()].find((c) => c.sid === ended[2] || c.dialled.some((d) => d.target === ended[2]));
      if (!call) return answer(404, { api_id: randomUUID(), error: 'not found' });
      answer(204);
      call.stream?.stop('', call.sid);
      return this.complete(call, ended[1] === 'Request' ? 'cancel' : 'completed');
    }
    const transfer = /^\/v1\/Account\/[^/]+\/Call\/([^/]+)\/$/.exec(path);
    if (req.method === 'POST' && transfer) {
      const call = this.calls.get(transfer[1] as string);
      if (!call || call.endedWith) return answer(404, { api_id: randomUUID(), error: 'call not found' });
      if (body.legs !== 'aleg' || typeof body.aleg_url !== 'string') return answer(400, { api_id: randomUUID(), error: 'legs and aleg_url are required' });
      answer(202, { api_id: randomUUID(), message: 'call transferred' });
      if (call.stream) {
        this.moved.add(call.stream);
        call.stream.stop('', call.sid);
        call.stream = undefined;
      }
      await this.execute(call, await this.webhook(body.aleg_url, call, { CallStatus: 'in-progress' }));
      return;
    }
    if (req.method !== 'POST' || path !== `${base}/Call/`) return answer(404, { api_id: randomUUID(), error: 'not found' });
    if (typeof body.to !== 'string' || typeof body.from !== 'string' || typeof body.answer_url !== 'string') return answer(400, { api_id: randomUUID(), error: 'from, to and answer_url are required' });
    const requestUuid = randomUUID();
    const call = new FakeCallA(randomUUID(), body.from, body.to, 'outbound');
    call.dialled.push({ target: requestUuid, result: 'request' });
    this.calls.set(call.sid, call);
    if (typeof body.hangup_url === 'string') this.hangupUrls.set(call, body.hangup_url);
    answer(201, { api_id: randomUUID(), message: 'call fired', request_uuid: requestUuid });
    this.onOutboundCall?.(call);
    if (typeof body.ring_url === 'string') await this.webhook(body.ring_url, call, { CallStatus: 'ringing', RequestUUID: requestUuid });
    const callee = this.callees.get(body.to) ?? { kind: 'answer' };
    await new Promise((r) => setTimeout(r, 150));
    if (callee.kind !== 'answer') return this.complete(call, callee.kind, callee.kind === 'busy' ? 'Busy Line' : callee.kind === 'no-answer' ? 'No Answer' : 'Unallocated Number');
    await this.execute(call, await this.webhook(body.answer_url, call, { CallStatus: 'in-progress', RequestUUID: requestUuid }));
  }
}
