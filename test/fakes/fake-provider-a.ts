import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { XMLParser } from 'fast-xml-parser';
import { signatureA } from '../../control-api/features/providers/provider-a/signature.js';
import { FakeStreamA, type FakeStream, type PlayoutItem } from './fake-provider-a-stream.js';

/**
 * A loopback provider A: its REST API (`/2010-04-01/Accounts/{Sid}/Calls.json` and
 * `/Calls/{Sid}.json`, HTTP basic auth with the Account SID and Auth Token, form bodies, JSON
 * answers and `{code, message, status}` errors), its signed webhooks (voice URL, `Url` on answer,
 * status callbacks per `StatusCallbackEvent`, `<Connect action>`, `<Dial action>` and the dialled
 * noun's statusCallback), and its media streams (fake-provider-a-stream.ts). Instructions are
 * parsed as XML and executed: `<Connect><Stream>`, `<Dial>`, `<Reject>`, `<Hangup>`.
 */
export type CalleeBehaviour =
  | { readonly kind: 'answer'; readonly ringMs?: number }
  | { readonly kind: 'busy' | 'failed'; readonly sipCode?: number }
  | { readonly kind: 'no-answer' };

export type TransferTargetBehaviour = { readonly kind: 'answer'; readonly bridgeMs: number } | { readonly kind: 'busy' | 'no-answer' | 'failed' };

export interface FakeProviderAOptions {
  readonly accountSid: string;
  readonly authToken: string;
  /** The voice URL configured on the numbers (inbound calls are posted there). */
  voiceUrl?: string;
}

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', parseTagValue: false, isArray: (name) => name === 'Parameter' });
type Xml = Record<string, unknown>;

export class FakeCallA {
  status = 'queued';
  stream: FakeStream | undefined;
  readonly streams: FakeStream[] = [];
  /** Agent audio as the caller heard it (20 ms frames, in playout order). */
  readonly heard: Int16Array[] = [];
  readonly playout: PlayoutItem[] = [];
  readonly marksEchoed: string[] = [];
  readonly received: string[] = [];
  clears = 0;
  /** Caller audio still to say; silence when empty. */
  private readonly speech: Int16Array[] = [];
  private speechOffset = 0;
  readonly ended: Promise<string>;
  endedWith: string | undefined;
  private resolveEnded!: (s: string) => void;
  answeredAt = 0;
  /** Transfer targets dialled, and how each went. */
  readonly dialled: { target: string; result: string }[] = [];
  statusCallback: string | undefined;
  statusEvents: string[] = [];
  private callbackSeq = 0;

  constructor(
    readonly sid: string,
    readonly from: string,
    readonly to: string,
    readonly direction: string,
  ) {
    this.ended = new Promise((r) => (this.resolveEnded = r));
  }

  /** Queues caller speech (8 kHz PCM), said in real time from the next tick. */
  say(pcm: Int16Array): void {
    this.speech.push(pcm);
  }

  get speaking(): boolean {
    return this.speech.length > 0;
  }

  /** The agent audio heard so far, as one PCM array. */
  heardPcm(): Int16Array {
    const out = new Int16Array(this.heard.length * 160);
    this.heard.forEach((f, i) => out.set(f, i * 160));
    return out;
  }

  /** One tick of the call's 20 ms clock: a caller frame goes out, a frame of agent audio plays. */
  tick(): void {
    const frame = new Int16Array(160);
    let filled = 0;
    while (filled < 160 && this.speech.length > 0) {
      const current = this.speech[0] as Int16Array;
      const n = Math.min(160 - filled, current.length - this.speechOffset);
      frame.set(current.subarray(this.speechOffset, this.speechOffset + n), filled);
      filled += n;
      this.speechOffset += n;
      if (this.speechOffset >= current.length) {
        this.speech.shift();
        this.speechOffset = 0;
      }
    }
    this.stream?.media(frame);
    // While connected the caller hears every 20 ms: agent audio, or silence when none is buffered.
    const item = this.playout[0] && 'frame' in this.playout[0] ? this.playout.shift() : undefined;
    if (item && 'frame' in item) this.heard.push(item.frame);
    else if (this.stream?.open) this.heard.push(SILENCE);
    while (this.playout[0] && 'mark' in this.playout[0]) {
      const mark = (this.playout.shift() as { mark: string }).mark;
      this.marksEchoed.push(mark);
      this.stream?.markEcho(mark);
    }
  }

  end(status: string): void {
    if (this.endedWith) return;
    this.endedWith = status;
    this.status = status;
    this.resolveEnded(status);
  }

  nextCallbackSeq(): number {
    return this.callbackSeq++;
  }
}

export class FakeProviderA {
  readonly calls = new Map<string, FakeCallA>();
  /** How the callee of an outbound call behaves, by E.164 (default: answers at once). */
  readonly callees = new Map<string, CalleeBehaviour>();
  /** How a transfer target behaves, by number or URI (default: answers, bridged 300 ms). */
  readonly targets = new Map<string, TransferTargetBehaviour>();
  /** Every REST request: method, path, form fields, and the status we answered. */
  readonly requests: { method: string; path: string; form: URLSearchParams; status: number }[] = [];
  /** Webhook answers that were not 2xx (signature refusals and the like). */
  readonly webhookFailures: { url: string; status: number; body: string }[] = [];
  /** When false, a stream that breaks is not followed by the `<Connect action>` request (a provider that gives up). */
  followConnectAction = true;
  /** Called with each new outbound call, before it rings (tests queue the callee's speech). */
  onOutboundCall: ((call: FakeCallA) => void) | undefined;
  private server: Server | undefined;
  private timer: NodeJS.Timeout | undefined;
  apiBaseUrl = '';

  constructor(readonly o: FakeProviderAOptions) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.onRest(req, res));
    this.server.listen(0, '127.0.0.1');
    await new Promise<void>((r) => this.server!.once('listening', r));
    this.apiBaseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    // One 20 ms clock for every call (drift-free: each tick is due at t0 + n * 20 ms).
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

  /** A caller rings one of the numbers: the voice URL gets the signed webhook and its instructions run. */
  async placeInbound(from: string, to: string): Promise<FakeCallA> {
    const call = new FakeCallA(`CA${randomBytes(16).toString('hex')}`, from, to, 'inbound');
    this.calls.set(call.sid, call);
    call.status = 'ringing';
    const answer = await this.webhook(call, this.o.voiceUrl as string, {});
    call.status = 'in-progress';
    call.answeredAt = Date.now();
    await this.execute(call, answer);
    return call;
  }

  /** The caller (or callee) hangs up: the stream stops and the call completes. */
  hangup(call: FakeCallA): void {
    this.finish(call, 'completed');
  }

  /** POSTs a signed form to one of the platform's URLs, as the provider does; returns the body. */
  async webhook(call: FakeCallA, url: string, extra: Record<string, string>): Promise<string> {
    const params: Record<string, string> = {
      AccountSid: this.o.accountSid,
      ApiVersion: '2010-04-01',
      CallSid: call.sid,
      CallStatus: call.status,
      Direction: call.direction,
      From: call.from,
      To: call.to,
      Caller: call.from,
      Called: call.to,
      ...extra,
    };
    const pairs = Object.entries(params);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signatureA(this.o.authToken, url, pairs) },
      body: new URLSearchParams(pairs).toString(),
    });
    const body = await res.text();
    if (!res.ok) this.webhookFailures.push({ url, status: res.status, body });
    return res.ok ? body : '';
  }

  /** Runs a TwiML document on the call. */
  async execute(call: FakeCallA, twiml: string): Promise<void> {
    if (call.endedWith) return;
    const response = (twiml ? (xml.parse(twiml) as Xml).Response : undefined) as Xml | undefined;
    if (!response || typeof response !== 'object') return this.finish(call, 'completed');
    if (response.Connect) return this.connect(call, response.Connect as Xml);
    if (response.Dial) return this.dial(call, response.Dial as Xml);
    if (response.Reject) return this.finish(call, (response.Reject as Xml).reason === 'busy' ? 'busy' : 'failed');
    this.finish(call, 'completed');
  }

  private connect(call: FakeCallA, connect: Xml): void {
    const stream = connect.Stream as Xml;
    const parameters = Object.fromEntries(((stream.Parameter as Xml[] | undefined) ?? []).map((p) => [String(p.name), String(p.value)]));
    const s = new FakeStreamA(
      { url: String(stream.url), authToken: this.o.authToken, accountSid: this.o.accountSid, callSid: call.sid, parameters },
      { playout: call.playout, onMarkEchoed: (m) => call.marksEchoed.push(m), onClear: () => call.clears++, onRaw: (t) => call.received.push(t) },
    );
    call.stream = s;
    call.streams.push(s);
    // When the stream ends without the call ending, <Connect> is over: its action says what next.
    void s.closed.then(async () => {
      if (call.stream === s) call.stream = undefined;
      if (s.closedBy === 'stop' || call.endedWith || !this.followConnectAction) return;
      const next = connect.action ? await this.webhook(call, String(connect.action), {}) : '';
      await this.execute(call, next);
    });
  }

  private async dial(call: FakeCallA, dial: Xml): Promise<void> {
    const noun = (dial.Number ?? dial.Sip) as Xml | string;
    const target = typeof noun === 'string' ? noun : String(noun['#text']);
    const behaviour = this.targets.get(target) ?? { kind: 'answer', bridgeMs: 300 };
    await sleep(150);
    if (call.endedWith) return;
    if (behaviour.kind === 'answer') {
      const answered = typeof noun === 'object' ? noun.statusCallback : undefined;
      if (answered) await this.webhook(call, String(answered), { CallStatus: 'in-progress', ParentCallSid: call.sid, CallSid: `CA${randomBytes(16).toString('hex')}` });
      call.dialled.push({ target, result: 'answered' });
      await sleep(behaviour.bridgeMs);
    } else call.dialled.push({ target, result: behaviour.kind });
    if (call.endedWith) return;
    const next = dial.action ? await this.webhook(call, String(dial.action), { DialCallStatus: behaviour.kind === 'answer' ? 'completed' : behaviour.kind }) : '';
    await this.execute(call, next);
  }

  private finish(call: FakeCallA, status: string): void {
    if (call.endedWith) return;
    call.stream?.stop(this.o.accountSid, call.sid);
    call.end(status);
    void this.status(call, status, status === 'busy' ? { SipResponseCode: '486' } : status === 'no-answer' ? { SipResponseCode: '487' } : {});
  }

  /** A status callback, if the call asked for this event. */
  private async status(call: FakeCallA, status: string, extra: Record<string, string>): Promise<void> {
    const event = status === 'in-progress' ? 'answered' : ['completed', 'busy', 'no-answer', 'failed', 'canceled'].includes(status) ? 'completed' : status;
    if (!call.statusCallback || !call.statusEvents.includes(event)) return;
    const duration: Record<string, string> = call.answeredAt ? { CallDuration: String(Math.round((Date.now() - call.answeredAt) / 1000)) } : {};
    await this.webhook(call, call.statusCallback, { CallStatus: status, SequenceNumber: String(call.nextCallbackSeq()), CallbackSource: 'call-progress-events', ...duration, ...extra });
  }

  private async onRest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const answer = (status: number, body: unknown): void => {
      this.requests.push({ method: req.method ?? '', path, form, status });
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const error = (status: number, code: number, message: string): void => answer(status, { code, message, more_info: `https://example.invalid/errors/${code}`, status });
    const expected = `Basic ${Buffer.from(`${this.o.accountSid}:${this.o.authToken}`).toString('base64')}`;
    if (req.headers.authorization !== expected) return error(401, 20003, 'Authenticate');
    const base = `/2010-04-01/Accounts/${this.o.accountSid}/Calls`;
    if (req.method === 'POST' && path === `${base}.json`) {
      const [to, from, url] = [form.get('To'), form.get('From'), form.get('Url')];
      if (!to || !from || !url) return error(400, 21201, 'To, From and Url are required');
      const call = new FakeCallA(`CA${randomBytes(16).toString('hex')}`, from, to, 'outbound-api');
      call.statusCallback = form.get('StatusCallback') ?? undefined;
      call.statusEvents = form.getAll('StatusCallbackEvent');
      this.calls.set(call.sid, call);
      answer(201, { sid: call.sid, account_sid: this.o.accountSid, to, from, status: 'queued', direction: 'outbound-api', api_version: '2010-04-01' });
      this.onOutboundCall?.(call);
      void this.ring(call, url, Number(form.get('Timeout') ?? '60'));
      return;
    }
    const m = new RegExp(`^${base}/(CA[0-9a-f]+)\\.json$`).exec(path);
    const call = m ? this.calls.get(m[1] as string) : undefined;
    if (req.method !== 'POST' || !m) return error(404, 20404, 'The requested resource was not found');
    if (!call) return error(404, 20404, `The requested resource ${path} was not found`);
    const twiml = form.get('Twiml');
    const status = form.get('Status');
    if (call.endedWith) return error(400, 21220, 'Call is not in-progress. Cannot redirect.');
    answer(200, { sid: call.sid, status: status ?? call.status });
    if (twiml) {
      call.stream?.stop(this.o.accountSid, call.sid);
      call.stream = undefined;
      void this.execute(call, twiml);
    } else if (status === 'completed' || status === 'canceled') this.finish(call, status);
  }

  private async ring(call: FakeCallA, url: string, timeoutSeconds: number): Promise<void> {
    const callee: CalleeBehaviour = this.callees.get(call.to) ?? { kind: 'answer' };
    await this.status(call, 'initiated', {});
    await sleep(50);
    call.status = 'ringing';
    await this.status(call, 'ringing', {});
    if (callee.kind === 'busy' || callee.kind === 'failed') {
      await sleep(100);
      this.finishWith(call, callee.kind, callee.sipCode ?? (callee.kind === 'busy' ? 486 : 404));
      return;
    }
    if (callee.kind === 'no-answer') {
      await sleep(Math.min(timeoutSeconds * 1000, 500));
      this.finishWith(call, 'no-answer', 487);
      return;
    }
    await sleep(callee.kind === 'answer' ? (callee.ringMs ?? 100) : 100);
    if (call.endedWith) return;
    call.status = 'in-progress';
    call.answeredAt = Date.now();
    await this.status(call, 'in-progress', {});
    await this.execute(call, await this.webhook(call, url, {}));
  }

  private finishWith(call: FakeCallA, status: string, sip: number): void {
    if (call.endedWith) return;
    call.end(status);
    void this.status(call, status, { SipResponseCode: String(sip) });
  }
}

const SILENCE = new Int16Array(160);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
