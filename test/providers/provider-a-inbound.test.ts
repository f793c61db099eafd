import assert from 'node:assert/strict';
import { FakeProviderA, type FakeCallA } from '../fakes/fake-provider-a.js';
import { trimmedFlite } from '../voice/callee-audio.js';
import { agentFinished, endedCall, shown, sleep, startProviderPlatform, until, voicedMs, type ProviderPlatform } from './provider-harness.js';

/**
 * Issue 17, provider A inbound: a caller rings a number on provider A; the fake provider posts
 * the signed voice webhook, runs the returned instructions, opens the signed media stream and
 * streams the caller (flite speech, keys); the real recipe runtime and offline voice pipeline
 * answer over the stream; the call is recorded like a SIP call.
 */
const accountSid = `AC${'1'.repeat(32)}`;
const authToken = 'provider-a-auth-token-0001';
const number = '+14155550181';

describe('provider A inbound calls over the media stream', function () {
  this.timeout(120_000);
  let fake: FakeProviderA;
  let platform: ProviderPlatform;
  let callers = 0;
  const nextCaller = (): string => `+1415555${String(1000 + ++callers)}`;

  before(async () => {
    fake = await new FakeProviderA({ accountSid, authToken }).start();
    platform = await startProviderPlatform({ providerA: fake.apiBaseUrl });
    fake.o.voiceUrl = `${platform.telephony.publicBaseUrl}/providers/a/voice`;
    await platform.addRecipe({
      name: 'Order status',
      startBlockId: 'hello',
      blocks: [
        { id: 'hello', type: 'message', settings: { text: 'Welcome to Acme.' } },
        { id: 'order', type: 'ask', settings: { prompt: 'Please key in your order number, then press hash.', variables: [{ name: 'order_number', type: 'number', description: 'the order number' }] } },
        { id: 'bye', type: 'close', settings: { closingScript: 'Thank you. Goodbye.', disposition: 'order_checked' } },
        { id: 'lost', type: 'close', settings: { closingScript: 'Sorry. Goodbye.', disposition: 'no_order' } },
      ],
      connections: [
        { from: 'hello', exit: 'next', to: 'order' },
        { from: 'order', exit: 'next', to: 'bye' },
        { from: 'order', exit: 'fallback', to: 'lost' },
      ],
    } as never);
    await platform.addNumber(number, 'Order status', { type: 'providerA', accountSid, authToken });
  });
  after(async () => {
    await platform?.close();
    await fake?.stop();
  });

  /** Rings the number and waits until the agent has greeted and asked (the caller heard both). */
  async function callAndHearQuestion(): Promise<{ call: FakeCallA; caller: string; heardAt: number }> {
    const caller = nextCaller();
    const call = await fake.placeInbound(caller, number);
    await until(() => call.stream?.open === true, 'the media stream to open');
    const heardAt = await agentFinished(() => call.heard, 0, 1_500);
    return { call, caller, heardAt };
  }

  it('answers with a signed media stream; DTMF reaches the Ask block; the agent hangs up through the REST API; the call is recorded', async () => {
    const { call, caller } = await callAndHearQuestion();
    for (const key of ['4', '8', '2', '1', '#']) {
      call.stream?.dtmf(key);
      await sleep(120);
    }
    assert.equal(await call.ended, 'completed');
    const row = await endedCall(platform.store, caller);
    assert.equal(row.direction, 'inbound');
    assert.equal(row.phone_number, number);
    assert.equal((row.variables as Record<string, unknown>).order_number, 4821, shown(row.lines));
    assert.equal(row.disposition, 'order_checked');
    assert.equal(row.end_reason, 'closed');
    const said = row.lines.filter((l) => l.speaker === 'agent').map((l) => l.text);
    assert.equal(said[0], 'Welcome to Acme.', shown(row.lines));
    assert.equal(said.at(-1), 'Thank you. Goodbye.', shown(row.lines));
    assert.equal(said.length, 3, shown(row.lines));
    // The platform ended the call at the provider (REST, basic auth), not by dropping the stream.
    const hangup = fake.requests.find((r) => r.path.endsWith(`/Calls/${call.sid}.json`));
    assert.equal(hangup?.form.get('Status'), 'completed');
    assert.equal(hangup?.status, 200);
    // Agent audio went out as the provider's media frames, with marks the provider echoed.
    assert.ok(voicedMs(call.heard) > 2_000, `heard ${voicedMs(call.heard)} ms of agent speech`);
    assert.ok(call.marksEchoed.length >= 3, `marks echoed: ${call.marksEchoed.join(',')}`);
    assert.equal(fake.webhookFailures.length, 0, JSON.stringify(fake.webhookFailures));
  });

  it('barge-in: caller speech over the agent makes the platform send clear; the caller\'s words are the next turn', async () => {
    const caller = nextCaller();
    const call = await fake.placeInbound(caller, number);
    await until(() => call.stream?.open === true, 'the media stream to open');
    // Talk over the question (the Message before it cannot be interrupted; the Ask's prompt can).
    // Synthesised before the wait: flite's time (longer with the cores busy) would come out of
    // the second or so left of the agent's line, and words said after it interrupt nothing.
    const words = await trimmedFlite('I want to talk to a person.');
    await until(() => voicedMs(call.heard) >= 2_200, 'the agent to be asking');
    call.say(words);
    await until(() => call.clears >= 1, 'a clear frame');
    const clearedAt = call.heard.length;
    await sleep(400);
    // After the clear the provider plays nothing of what it had buffered.
    assert.ok(voicedMs(call.heard.slice(clearedAt)) <= 60, `agent audio after the clear: ${voicedMs(call.heard.slice(clearedAt))} ms`);
    // The words that cut the agent off are the Ask's next turn: not a number, so it asks again.
    await agentFinished(() => call.heard, clearedAt, 800);
    fake.hangup(call);
    const row = await endedCall(platform.store, caller);
    assert.ok(row.lines.some((l) => l.speaker === 'agent' && l.interrupted), shown(row.lines));
    assert.ok(row.lines.some((l) => l.speaker === 'caller'), shown(row.lines));
    assert.equal(row.end_reason, 'callerHangup');
  });

  it('the caller hanging up (stop) ends the run at once; nothing more is sent to the provider', async () => {
    const { call, caller } = await callAndHearQuestion();
    const restBefore = fake.requests.length;
    fake.hangup(call);
    const row = await endedCall(platform.store, caller, 10_000);
    assert.equal(row.end_reason, 'callerHangup');
    assert.equal(row.disposition, null);
    assert.ok(row.recording_ref, 'the recording is kept');
    await sleep(300);
    assert.equal(fake.requests.length, restBefore, 'no REST hang-up for a call the caller ended');
  });

  it('a dropped stream that is not reconnected within the grace ends the call at the provider; the record keeps the call (streamLost)', async () => {
    const { call, caller } = await callAndHearQuestion();
    fake.followConnectAction = false;
    try {
      call.stream?.drop();
      assert.equal(await call.ended, 'completed');
      const hangup = fake.requests.find((r) => r.path.endsWith(`/Calls/${call.sid}.json`));
      assert.equal(hangup?.form.get('Status'), 'completed');
      const row = await endedCall(platform.store, caller);
      assert.equal(row.end_reason, 'streamLost', shown(row.lines));
      assert.equal(row.lines[0]?.text, 'Welcome to Acme.');
    } finally {
      fake.followConnectAction = true;
    }
  });

  it('a dropped stream (no stop) is reconnected through the <Connect> action and the same run goes on', async () => {
    const { call, caller } = await callAndHearQuestion();
    call.stream?.drop();
    await until(() => call.streams.length === 2 && call.streams[1]?.open === true, 'the stream to reconnect');
    for (const key of ['7', '7', '#']) {
      call.streams[1]?.dtmf(key);
      await sleep(120);
    }
    assert.equal(await call.ended, 'completed');
    const row = await endedCall(platform.store, caller);
    assert.equal((row.variables as Record<string, unknown>).order_number, 77, shown(row.lines));
    assert.equal(row.end_reason, 'closed');
    // One run: the greeting was said once.
    assert.equal(row.lines.filter((l) => l.text === 'Welcome to Acme.').length, 1, shown(row.lines));
  });
});
