import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { signatureA } from '../../control-api/features/providers/provider-a/signature.js';
import { FakeProviderA, type FakeCallA } from '../fakes/fake-provider-a.js';
import { agentFinished, endedCall, shown, sleep, startProviderPlatform, until, type ProviderPlatform } from './provider-harness.js';

/**
 * Issue 17, provider A's wire protocol at the edges: every webhook and stream handshake must be
 * signed with the number's Auth Token (403 otherwise), bad requests get a precise 4xx, and a
 * stream frame the protocol does not allow ends the call cleanly: a clear log line, the call hung
 * up at the provider, and the record kept with what was said until then.
 */
const accountSid = `AC${'2'.repeat(32)}`;
const authToken = 'provider-a-auth-token-0002';
const number = '+14155550182';
const disabled = '+14155550183';

describe('provider A protocol: signatures, bad requests and malformed stream frames', function () {
  this.timeout(120_000);
  let fake: FakeProviderA;
  let platform: ProviderPlatform;
  let voiceUrl: string;
  let seq = 0;
  const nextCaller = (): string => `+1415556${String(1000 + ++seq)}`;

  before(async () => {
    fake = await new FakeProviderA({ accountSid, authToken }).start();
    platform = await startProviderPlatform({ providerA: fake.apiBaseUrl });
    voiceUrl = `${platform.telephony.publicBaseUrl}/providers/a/voice`;
    fake.o.voiceUrl = voiceUrl;
    await platform.addRecipe({
      name: 'Greeting',
      startBlockId: 'hello',
      blocks: [
        { id: 'hello', type: 'message', settings: { text: 'Welcome to Acme.' } },
        { id: 'order', type: 'ask', settings: { prompt: 'Please key in your order number.', variables: [{ name: 'order_number', type: 'number', description: 'the order number' }] } },
        { id: 'bye', type: 'close', settings: { closingScript: 'Goodbye.', disposition: 'done' } },
      ],
      connections: [
        { from: 'hello', exit: 'next', to: 'order' },
        { from: 'order', exit: 'next', to: 'bye' },
        { from: 'order', exit: 'fallback', to: 'bye' },
      ],
    } as never);
    await platform.addNumber(number, 'Greeting', { type: 'providerA', accountSid, authToken });
    await platform.addNumber(disabled, 'Greeting', { type: 'providerA', accountSid, authToken }, { enabled: false });
  });
  after(async () => {
    await platform?.close();
    await fake?.stop();
  });

  const form = (to: string, extra: Record<string, string> = {}): [string, string][] =>
    Object.entries({ AccountSid: accountSid, CallSid: `CA${'9'.repeat(32)}`, From: '+14155559999', To: to, CallStatus: 'ringing', Direction: 'inbound', ...extra });

  async function post(url: string, pairs: [string, string][], signature: string | undefined, contentType = 'application/x-www-form-urlencoded'): Promise<{ status: number; body: string }> {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': contentType, ...(signature !== undefined ? { 'x-twilio-signature': signature } : {}) }, body: new URLSearchParams(pairs).toString() });
    return { status: res.status, body: await res.text() };
  }

  describe('the voice webhook', () => {
    it('answers a signed call with a <Connect><Stream> to us', async () => {
      const pairs = form(number);
      const res = await post(voiceUrl, pairs, signatureA(authToken, voiceUrl, pairs));
      assert.equal(res.status, 200, res.body);
      assert.match(res.body, /^<\?xml version="1.0" encoding="UTF-8"\?><Response><Connect action="http:\/\/127\.0\.0\.1:\d+\/providers\/a\/calls\/[\w-]+\/stream-ended" method="POST"><Stream url="ws:\/\/127\.0\.0\.1:\d+\/providers\/a\/calls\/[\w-]+\/stream"><\/Stream><\/Connect><\/Response>$/);
    });

    it('refuses a missing, wrong or foreign signature with 403 and sets no call up', async () => {
      const pairs = form(number);
      const before = platform.telephony.calls.size;
      for (const signature of [undefined, 'bm90IGEgc2lnbmF0dXJl', signatureA('another-token', voiceUrl, pairs), signatureA(authToken, `${voiceUrl}?x=1`, pairs), signatureA(authToken, voiceUrl, form(number, { From: '+19999999999' }))]) {
        const res = await post(voiceUrl, pairs, signature);
        assert.equal(res.status, 403, `${signature}: ${res.body}`);
        assert.equal(JSON.parse(res.body).code, 'permission_denied');
      }
      assert.equal(platform.telephony.calls.size, before);
    });

    it('answers precise 4xx for bad requests: 404 unknown number, 400 missing fields, 415 not a form, 403 another account', async () => {
      const unknown = form('+14155550000');
      assert.equal((await post(voiceUrl, unknown, signatureA(authToken, voiceUrl, unknown))).status, 404);
      const missing: [string, string][] = [['AccountSid', accountSid]];
      const res = await post(voiceUrl, missing, signatureA(authToken, voiceUrl, missing));
      assert.equal(res.status, 400);
      assert.match(JSON.parse(res.body).message, /missing To, From, CallSid/);
      assert.equal((await post(voiceUrl, form(number), 'x', 'application/json')).status, 415);
      const foreign = form(number, { AccountSid: `AC${'7'.repeat(32)}` });
      assert.equal((await post(voiceUrl, foreign, signatureA(authToken, voiceUrl, foreign))).status, 403);
    });

    it('rejects a call to a disabled number with <Reject>', async () => {
      const pairs = form(disabled);
      const res = await post(voiceUrl, pairs, signatureA(authToken, voiceUrl, pairs));
      assert.equal(res.status, 200);
      assert.match(res.body, /<Reject reason="rejected"\/>/);
    });

    it('tells the provider busy (<Reject reason="busy"/>) once the number has its limit of calls in hand', async () => {
      const busyNumber = '+14155550184';
      await platform.addNumber(busyNumber, 'Greeting', { type: 'providerA', accountSid, authToken });
      const answers: string[] = [];
      for (let i = 0; i < 4; i++) {
        const pairs = form(busyNumber, { CallSid: `CA${String(i).repeat(32)}` });
        answers.push((await post(voiceUrl, pairs, signatureA(authToken, voiceUrl, pairs))).body);
      }
      // The harness allows 3 calls per number (sip.maxCallsPerNumber); these wait for their streams.
      assert.equal(answers.filter((a) => a.includes('<Connect')).length, 3);
      assert.match(answers[3] ?? '', /<Reject reason="busy"\/>/);
    });

    it('refuses a media stream handshake that is unsigned (403) or for no call (404)', async () => {
      const pairs = form(number);
      const twiml = (await post(voiceUrl, pairs, signatureA(authToken, voiceUrl, pairs))).body;
      const url = /<Stream url="([^"]+)"/.exec(twiml)?.[1] as string;
      const status = (u: string, headers: Record<string, string>) =>
        new Promise<number>((resolve) => {
          const ws = new WebSocket(u, { headers });
          ws.once('unexpected-response', (_req, r) => resolve(r.statusCode ?? 0));
          ws.once('open', () => (ws.close(), resolve(101)));
          ws.once('error', () => undefined);
        });
      assert.equal(await status(url, {}), 403);
      assert.equal(await status(url, { 'X-Twilio-Signature': signatureA('another-token', url) }), 403);
      const other = url.replace(/calls\/[\w-]+\/stream/, 'calls/no-such-call/stream');
      assert.equal(await status(other, { 'X-Twilio-Signature': signatureA(authToken, other) }), 404);
    });
  });

  describe('malformed media stream frames', () => {
    /** A call that has streamed long enough for the greeting to be said. */
    async function greetedCall(): Promise<{ call: FakeCallA; caller: string }> {
      const caller = nextCaller();
      const call = await fake.placeInbound(caller, number);
      await until(() => call.stream?.open === true, 'the media stream to open');
      await agentFinished(() => call.heard, 0, 1_500);
      return { call, caller };
    }

    for (const [what, frame, code] of [
      ['media whose payload is not base64', (sid: string) => JSON.stringify({ event: 'media', streamSid: sid, media: { payload: '%%%not-base64%%' } }), 1007],
      ['text that is not JSON', () => '{"event": "media", "streamSid": ', 1007],
      ['media for another stream', () => JSON.stringify({ event: 'media', streamSid: 'MZ-not-this-one', media: { payload: '' } }), 1007],
      ['a binary frame', () => Buffer.from([1, 2, 3]), 1003],
    ] as const) {
      it(`${what}: the stream is closed with ${code}, the call hung up at the provider, the record kept`, async () => {
        const { call, caller } = await greetedCall();
        const stream = call.stream!;
        stream.raw(frame(stream.streamSid));
        await stream.closed;
        assert.equal(stream.closeCode, code);
        assert.equal(await call.ended, 'completed');
        const hangup = fake.requests.find((r) => r.path.endsWith(`/Calls/${call.sid}.json`));
        assert.equal(hangup?.form.get('Status'), 'completed');
        const row = await endedCall(platform.store, caller);
        assert.equal(row.end_reason, 'streamError', shown(row.lines));
        assert.equal(row.lines[0]?.text, 'Welcome to Acme.', shown(row.lines));
        assert.ok(row.recording_ref);
        assert.equal(row.analysis_status, 'analyzing', 'post-call analysis queued as for any call');
      });
    }

    it('an event the protocol does not define is ignored and the call goes on', async () => {
      const { call, caller } = await greetedCall();
      call.stream!.raw(JSON.stringify({ event: 'future-event', streamSid: call.stream!.streamSid, detail: { x: 1 } }));
      await sleep(300);
      assert.equal(call.endedWith, undefined);
      for (const key of ['5', '#']) {
        call.stream!.dtmf(key);
        await sleep(120);
      }
      assert.equal(await call.ended, 'completed');
      const row = await endedCall(platform.store, caller);
      assert.equal((row.variables as Record<string, unknown>).order_number, 5, shown(row.lines));
    });
  });
  // Last: a drained platform takes no new call.
  describe('a drain (SIGTERM or POST /v1/admin/drain)', () => {
    it('answers new calls busy while the calls in hand go on, until they end or the drain times out', async () => {
      const drainNumber = '+14155550185';
      await platform.addNumber(drainNumber, 'Greeting', { type: 'providerA', accountSid, authToken });
      const call = (sid: string) => {
        const pairs = form(drainNumber, { CallSid: `CA${sid.repeat(32)}` });
        return post(voiceUrl, pairs, signatureA(authToken, voiceUrl, pairs));
      };
      assert.match((await call('7')).body, /<Connect/);
      const inHand = platform.telephony.calls.size;
      assert.ok(inHand >= 1);
      // The call waiting for its stream is still in hand when a short drain times out...
      assert.equal(await platform.telephony.drain(300), false);
      // ...and a new call is told busy.
      assert.match((await call('8')).body, /<Reject reason="busy"\/>/);
      assert.equal(platform.telephony.calls.size, inHand);
      // Calls that never got their stream are given up after the start timeout (5 s here): idle.
      assert.equal(await platform.telephony.drain(10_000), true);
    });
  });
});
