import assert from 'node:assert/strict';
import type { OriginateResult } from '../../core/ports/originator.js';
import { FakeProviderB } from '../fakes/fake-provider-b.js';
import { endedCall, shown, startProviderPlatform, until, voicedMs, type ProviderPlatform } from './provider-harness.js';

/**
 * Issue 17, transfers on provider B. Its Voicebot applet has no transfer instruction; the flow
 * goes on when our stream closes: a Connect applet asks our dynamic URL whom to dial, and
 * Passthru applets after it report how the dial went (docs/providers.md, "Provider B"). The fake
 * executes that flow applet by applet.
 */
const account = { accountSid: 'acme-b-transfers', apiKey: 'b-api-key-0002', apiToken: 'b-api-token-0002' };
const desk = '+919800000001';
const busyDesk = '+919800000002';
const toDesk = '+918047491811';
const toBusyDesk = '+918047491812';
const toSipDesk = '+918047491813';
const plain = '+918047491814';
const auth = `Basic ${Buffer.from(`${account.apiKey}:${account.apiToken}`).toString('base64')}`;

describe('provider B transfers through the flow\'s Connect applet', function () {
  this.timeout(120_000);
  let fake: FakeProviderB;
  let platform: ProviderPlatform;

  before(async () => {
    fake = await new FakeProviderB(account).start();
    platform = await startProviderPlatform({ providerA: 'http://127.0.0.1:9', providerB: fake.apiBaseUrl });
    fake.o.flowBaseUrl = `${platform.telephony.publicBaseUrl}/providers/b`;
    fake.targets.set(desk, { kind: 'answer', talkMs: 600 });
    fake.targets.set(busyDesk, { kind: 'busy' });
    const provider = { type: 'providerB' as const, ...account, outboundAppId: '4712', subDomain: 'api.in.exotel.com' };
    for (const [name, target, number] of [['To desk', desk, toDesk], ['To busy desk', busyDesk, toBusyDesk], ['To SIP desk', 'sip:desk@pbx.example.com', toSipDesk]] as const) {
      await platform.addRecipe({
        name,
        startBlockId: 'move',
        blocks: [
          { id: 'move', type: 'transfer', settings: { target, bridgeMessage: 'Please hold.' } },
          { id: 'sorry', type: 'close', settings: { closingScript: 'The line is busy. Goodbye.', disposition: 'transfer_failed' } },
        ],
        connections: [{ from: 'move', exit: 'failed', to: 'sorry' }],
      } as never);
      await platform.addNumber(number, name, provider);
    }
    await platform.addRecipe({ name: 'Just bye', startBlockId: 'bye', blocks: [{ id: 'bye', type: 'close', settings: { closingScript: 'Goodbye.', disposition: 'done' } }], connections: [] } as never);
    await platform.addNumber(plain, 'Just bye', provider);
  });
  afterEach(() => Object.assign(fake.flow, { connect: true, backToBot: true }));
  after(async () => {
    await platform?.close();
    await fake?.stop();
  });

  const flowOf = (sid: string) => fake.flowRequests.filter((r) => r.callSid === sid).map((r) => ({ applet: r.applet, status: r.status, body: r.body, callType: r.query.get('CallType') }));

  it('the target answers: the Connect applet is told to dial it, the Passthru reports the conversation, the call is recorded transferred', async () => {
    const call = await fake.placeInbound('+919811120001', toDesk);
    assert.equal(await call.ended, 'completed');
    assert.deepEqual(call.dialled, [{ target: desk, result: 'answered' }]);
    const [connect, passthru, ...more] = flowOf(call.sid);
    assert.equal(connect?.applet, 'connect');
    assert.deepEqual(JSON.parse(connect?.body ?? '{}'), { fetch_after_attempt: false, destination: { numbers: [desk] }, outgoing_phone_number: toDesk, max_ringing_duration: 30, max_conversation_duration: 14_400 });
    assert.deepEqual({ applet: passthru?.applet, status: passthru?.status, callType: passthru?.callType }, { applet: 'passthru', status: 302, callType: 'completed' });
    assert.deepEqual(more, []);
    const row = await endedCall(platform.store, '+919811120001');
    assert.equal(row.end_reason, 'transferred', shown(row.lines));
    assert.deepEqual(row.lines.map((l) => l.text), ['Please hold.']);
    assert.equal(call.streams.length, 1);
    assert.ok(voicedMs(call.heard) >= 400, 'the caller heard the bridge message before the stream closed');
    assert.deepEqual(fake.webhookFailures, []);
  });

  it('the target is busy and the flow brings the caller back (Passthru 200 -> Voicebot): the block takes failed on a new stream', async () => {
    const call = await fake.placeInbound('+919811120002', toBusyDesk);
    await until(() => call.streams.length === 2 && call.stream?.open === true, 'the caller to be back on a second stream');
    const back = call.heard.length;
    assert.equal(await call.ended, 'completed');
    assert.deepEqual(call.dialled, [{ target: busyDesk, result: 'busy' }]);
    assert.deepEqual(flowOf(call.sid).map((r) => [r.applet, r.status, r.callType]), [['connect', 200, null], ['passthru', 200, 'incomplete']]);
    assert.ok(voicedMs(call.heard.slice(back)) >= 1_000, 'the closing line was heard on the second stream');
    const row = await endedCall(platform.store, '+919811120002');
    assert.equal(row.disposition, 'transfer_failed', shown(row.lines));
    assert.equal(row.end_reason, 'closed');
    assert.deepEqual(row.lines.filter((l) => l.speaker === 'agent').map((l) => l.text), ['Please hold.', 'The line is busy. Goodbye.']);
  });

  it('the target is busy and the flow hangs up (no Voicebot after the Passthru): the block cannot take failed live; recorded transferFailed', async () => {
    fake.flow.backToBot = false;
    const call = await fake.placeInbound('+919811120003', toBusyDesk);
    assert.equal(await call.ended, 'completed');
    assert.deepEqual(call.dialled, [{ target: busyDesk, result: 'busy' }]);
    assert.equal(call.streams.length, 1);
    const row = await endedCall(platform.store, '+919811120003', 20_000);
    assert.equal(row.end_reason, 'transferFailed', shown(row.lines));
    assert.equal(row.disposition, null, 'the Close block after the failed exit never ran');
    assert.deepEqual(row.lines.map((l) => l.text), ['Please hold.']);
  });

  it('a SIP target is refused before the caller leaves (the Connect applet dials numbers): failed exit on the same stream', async () => {
    const call = await fake.placeInbound('+919811120004', toSipDesk);
    assert.equal(await call.ended, 'completed');
    assert.deepEqual(call.dialled, []);
    const row = await endedCall(platform.store, '+919811120004');
    assert.equal(row.disposition, 'transfer_failed', shown(row.lines));
    assert.deepEqual(row.lines.filter((l) => l.speaker === 'agent').map((l) => l.text), ['Please hold.', 'The line is busy. Goodbye.']);
    // The call ended without a transfer: the Connect applet is told to dial nobody, the Passthru sends the flow to Hangup.
    assert.deepEqual(flowOf(call.sid).map((r) => [r.applet, r.status, r.callType]), [['connect', 200, null], ['passthru', 302, 'incomplete']]);
    assert.deepEqual(JSON.parse(flowOf(call.sid)[0]?.body ?? '{}'), { fetch_after_attempt: false, destination: { numbers: [] } });
    assert.equal(call.streams.length, 1);
  });

  /** A campaign call from `from` to `to` through the Originator port (the scheduler's side is provider-b.test.ts). */
  async function campaignCall(from: string, to: string): Promise<OriginateResult> {
    const number = await platform.store.db.selectFrom('phone_numbers').select(['id', 'recipe_id']).where('e164', '=', from).executeTakeFirstOrThrow();
    return platform.telephony.originate({
      from: { e164: from, phoneNumberId: number.id },
      to,
      ringTimeoutMs: 20_000,
      startLogic: { mode: 'immediately' },
      context: { tenantId: platform.tenantId, campaignId: 'b-transfers', messageId: `m-${to}`, attempt: 1, recipeId: number.recipe_id, variables: {} },
      signal: new AbortController().signal,
    });
  }

  it('campaign call, the target answers: the callee is handed over, the call is recorded transferred when B reports the conversation over', async () => {
    const result = await campaignCall(toDesk, '+919822230003');
    assert.equal(result.outcome, 'answered');
    const completion = await (result as Extract<OriginateResult, { outcome: 'answered' }>).completion;
    assert.equal(completion.reason, 'transferred');
    const call = [...fake.calls.values()].find((c) => c.to === '+919822230003' || c.from === '+919822230003');
    assert.ok(call);
    assert.equal(await call.ended, 'completed');
    assert.deepEqual(call.dialled, [{ target: desk, result: 'answered' }]);
    const passthru = fake.flowRequests.find((r) => r.applet === 'passthru' && r.callSid === call.sid);
    assert.equal(passthru?.query.get('CallType'), 'completed');
    // B says the conversation is over only when it is: the call stayed ours (transferring) until then.
    assert.ok(passthru && completion.endedAt >= passthru.at, 'the call ended when the Passthru reported the conversation, not when the stream closed');
    const row = await endedCall(platform.store, '+919822230003');
    assert.equal(row.direction, 'outbound');
    assert.equal(row.end_reason, 'transferred', shown(row.lines));
    assert.deepEqual(row.lines.map((l) => l.text), ['Please hold.']);
  });

  it('campaign call, target busy, the flow brings the callee back: the Voicebot applet names the call by its CustomField; failed exit on a new stream', async () => {
    const result = await campaignCall(toBusyDesk, '+919822230001');
    assert.equal(result.outcome, 'answered');
    const completion = await (result as Extract<OriginateResult, { outcome: 'answered' }>).completion;
    assert.equal(completion.reason, 'agent-closed');
    const call = [...fake.calls.values()].find((c) => c.from === '+919822230001' || c.to === '+919822230001');
    assert.equal(call?.streams.length, 2);
    assert.ok(call && (await call.ended) === 'completed');
    const row = await endedCall(platform.store, '+919822230001');
    assert.equal(row.direction, 'outbound');
    assert.equal(row.disposition, 'transfer_failed', shown(row.lines));
    assert.deepEqual(row.lines.filter((l) => l.speaker === 'agent').map((l) => l.text), ['Please hold.', 'The line is busy. Goodbye.']);
  });

  it('campaign call, target busy, the flow hangs up: B\'s terminal status callback ends the call at once, recorded transferFailed', async () => {
    fake.flow.backToBot = false;
    const result = await campaignCall(toBusyDesk, '+919822230002');
    assert.equal(result.outcome, 'answered');
    const completion = await (result as Extract<OriginateResult, { outcome: 'answered' }>).completion;
    assert.equal(completion.reason, 'transfer-failed');
    const row = await endedCall(platform.store, '+919822230002');
    assert.equal(row.end_reason, 'transferFailed', shown(row.lines));
    assert.deepEqual(row.lines.map((l) => l.text), ['Please hold.']);
    // The status callback ended it, not the wait (5 s here) for the flow to bring the callee back.
    const passthru = fake.flowRequests.find((r) => r.applet === 'passthru' && r.query.get('CallTo') === '+919822230002');
    assert.ok(passthru && completion.endedAt - passthru.at < 4_000, `ended ${completion.endedAt - (passthru?.at ?? 0)} ms after the Passthru`);
  });

  it('refuses the Connect and Passthru requests without the API key and token (403), for an unknown call (404) or without CallSid (400)', async () => {
    const call = await fake.placeInbound('+919811120005', plain);
    assert.equal(await call.ended, 'completed');
    await endedCall(platform.store, '+919811120005');
    const base = `${platform.telephony.publicBaseUrl}/providers/b`;
    const wrong = `Basic ${Buffer.from(`${account.apiKey}:not-the-token`).toString('base64')}`;
    for (const path of ['connect', 'transfer-ended']) {
      const url = `${base}/${path}?CallSid=${call.sid}&CallType=incomplete`;
      assert.equal((await fetch(url)).status, 403, path);
      assert.equal((await fetch(url, { headers: { Authorization: wrong } })).status, 403, path);
      assert.equal((await fetch(`${base}/${path}?CallSid=not-a-call`, { headers: { Authorization: auth } })).status, 404, path);
      assert.equal((await fetch(`${base}/${path}`, { headers: { Authorization: auth } })).status, 400, path);
    }
    // A call that has ended is not started over by a Voicebot applet asking again.
    assert.equal((await fetch(`${base}/voicebot?CallSid=${call.sid}&CallFrom=%2B919811120005&CallTo=${encodeURIComponent(plain)}`, { headers: { Authorization: auth } })).status, 404);
  });
});
