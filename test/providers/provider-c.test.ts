import assert from 'node:assert/strict';
import { FakeClock } from '../../core/clock.js';
import { LateBoundOriginator } from '../../bin/originator-registry.js';
import { CallbackDelivery } from '../../control-api/features/campaigns/callbacks.js';
import { CampaignScheduler } from '../../control-api/features/campaigns/campaign-scheduler.js';
import { CallbackReceiver } from '../helpers/campaign-support.js';
import type { CampaignSpec } from '../../control-api/model/domain/campaign.js';
import type { RunningServer } from '../../control-api/platform/http/serve.js';
import { signatureC } from '../../control-api/features/providers/provider-c/account.js';
import { SafeHttp } from '../../control-api/platform/net/safe-http.js';
import { RoutingOriginator } from '../../control-api/features/providers/provider-telephony.js';
import { campaignDoc } from '../helpers/resource-documents.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { issueToken } from '../../control-api/model/tenants/api-tokens.js';
import { startControl, twirpRequest } from '../campaigns/twirp-client.js';
import type { FakeCallA } from '../fakes/fake-provider-a.js';
import { FakeProviderC } from '../fakes/fake-provider-c.js';
import { trimmedFlite } from '../voice/callee-audio.js';
import { agentFinished, endedCall, shown, sleep, startProviderPlatform, until, voicedMs, type ProviderPlatform } from './provider-harness.js';

/**
 * Issue 17, provider C on its XML-and-stream protocol: signed V2 answer webhook answered with a
 * bidirectional `<Stream>`, the stream's playAudio / checkpoint / clearAudio, the call ending with
 * the socket, transfers through the call-transfer API and our `<Dial>`, campaign calls through
 * `POST /v1/Account/{id}/Call/` and its ring/answer/hangup URLs.
 */
const creds = { apiKey: 'MAC0000000000000001', apiToken: 'provider-c-token-0001' };
const number = '+918047491901';
const campaignNow = Date.parse('2026-03-02T04:30:00Z');

describe('provider C: signed answer URL, bidirectional <Stream>, Call API', function () {
  this.timeout(120_000);
  const clock = new FakeClock(campaignNow);
  const receiver = new CallbackReceiver();
  let fake: FakeProviderC;
  let platform: ProviderPlatform;
  let control: RunningServer;
  let scheduler: CampaignScheduler;
  let delivery: CallbackDelivery;
  let token: string;
  let seq = 0;
  const provider = (apiToken = creds.apiToken) => ({ type: 'providerC' as const, apiKey: creds.apiKey, apiToken, planId: 'plan-1', planName: 'Voice AI', soundId: 'sound-1' });

  before(async () => {
    fake = await new FakeProviderC(creds).start();
    platform = await startProviderPlatform({ providerA: 'http://127.0.0.1:9', providerC: fake.apiBaseUrl });
    fake.o.answerUrl = `${platform.telephony.publicBaseUrl}/providers/c/answer`;
    await receiver.start();
    scheduler = new CampaignScheduler({ db: platform.store.db, originator: new RoutingOriginator(new LateBoundOriginator(), platform.telephony), clock, logger: platform.logger, workerId: 'provider-c-worker' });
    delivery = new CallbackDelivery({ db: platform.store.db, http: new SafeHttp({ allowlist: () => ['127.0.0.1'] }), clock, logger: platform.logger, secretFor: async () => 'provider-c-callback-secret-01' });
    control = await startControl(platform.store, { clock });
    token = (await issueToken(platform.store.db, { tenantId: platform.tenantId, name: 'campaign', scopes: ['campaign'] })).token;
    await platform.addRecipe({
      name: 'Order line',
      startBlockId: 'hello',
      blocks: [
        { id: 'hello', type: 'message', settings: { text: 'Welcome to Acme.' } },
        { id: 'order', type: 'ask', settings: { prompt: 'Please key in your order number.', variables: [{ name: 'order_number', type: 'number', description: 'the order number' }] } },
        { id: 'bye', type: 'close', settings: { closingScript: 'Thank you. Goodbye.', disposition: 'order_checked' } },
      ],
      connections: [
        { from: 'hello', exit: 'next', to: 'order' },
        { from: 'order', exit: 'next', to: 'bye' },
        { from: 'order', exit: 'fallback', to: 'bye' },
      ],
    } as never);
    await platform.addNumber(number, 'Order line', provider());
    fake.targets.set('+14155550199', { kind: 'busy' });
    for (const [name, target, line] of [['Desk C', '+14155550198', '+918047491902'], ['Busy desk C', '+14155550199', '+918047491903']] as const) {
      await platform.addRecipe({
        name,
        startBlockId: 'move',
        blocks: [
          { id: 'move', type: 'transfer', settings: { target, bridgeMessage: 'Please hold.' } },
          { id: 'sorry', type: 'close', settings: { closingScript: 'The line is busy. Goodbye.', disposition: 'transfer_failed' } },
        ],
        connections: [{ from: 'move', exit: 'failed', to: 'sorry' }],
      } as never);
      await platform.addNumber(line, name, provider());
    }
  });
  after(async () => {
    await control?.close(0);
    await receiver.stop();
    await platform?.close();
    await fake?.stop();
  });

  const keyIn = async (call: FakeCallA, keys: string): Promise<void> => {
    for (const key of keys) {
      call.stream?.dtmf(key);
      await sleep(120);
    }
  };

  it('inbound: DTMF reaches the Ask block, barge-in sends clearAudio, the agent hangs up through the API; recorded', async () => {
    const call = await fake.placeInbound('+919833330001', number);
    await until(() => call.stream?.open === true, 'the stream to open');
    // Synthesised before the wait: flite's time (longer with the cores busy) would come out of
    // the second or so left of the agent's line, and words said after it interrupt nothing.
    const words = await trimmedFlite('I do not know it.');
    await until(() => voicedMs(call.heard) >= 1_900, 'the agent to be asking');
    call.say(words);
    await until(() => call.clears >= 1, 'clearAudio');
    await agentFinished(() => call.heard, call.heard.length, 600);
    await keyIn(call, '4821#');
    assert.equal(await call.ended, 'completed');
    const row = await endedCall(platform.store, '+919833330001');
    assert.equal((row.variables as Record<string, unknown>).order_number, 4821, shown(row.lines));
    assert.ok(row.lines.some((l) => l.interrupted), shown(row.lines));
    assert.equal(row.end_reason, 'closed');
    assert.ok(fake.requests.some((r) => r.method === 'DELETE' && r.path === `/v1/Account/${creds.apiKey}/Call/${call.sid}/`), 'hung up through the Call API');
    assert.ok(call.marksEchoed.length >= 2, 'checkpoints reached and reported');
  });

  it('transfers: the call is moved to our <Dial>; an answering target records it transferred, a busy one brings the caller back on a new stream', async () => {
    const answered = await fake.placeInbound('+919833330011', '+918047491902');
    assert.equal(await answered.ended, 'completed');
    assert.deepEqual(answered.dialled, [{ target: '+14155550198', result: 'answered' }]);
    assert.equal((await endedCall(platform.store, '+919833330011')).end_reason, 'transferred');
    const busy = await fake.placeInbound('+919833330012', '+918047491903');
    assert.equal(await busy.ended, 'completed');
    assert.deepEqual(busy.dialled, [{ target: '+14155550199', result: 'busy' }]);
    assert.equal(busy.streams.length, 2);
    const row = await endedCall(platform.store, '+919833330012');
    assert.equal(row.disposition, 'transfer_failed', shown(row.lines));
    assert.deepEqual(row.lines.filter((l) => l.speaker === 'agent').map((l) => l.text), ['Please hold.', 'The line is busy. Goodbye.']);
  });

  it('refuses an unsigned or wrongly signed answer webhook (403) and an unknown number (404)', async () => {
    const url = fake.o.answerUrl as string;
    const form = new URLSearchParams({ CallUUID: 'x-1', From: '+919833330002', To: number }).toString();
    const post = (headers: Record<string, string>, body = form) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body }).then((r) => r.status);
    assert.equal(await post({}), 403);
    assert.equal(await post({ 'x-plivo-signature-v2': signatureC('wrong-token', url, 'n1'), 'x-plivo-signature-v2-nonce': 'n1' }), 403);
    assert.equal(await post({ 'x-plivo-signature-v2': signatureC(creds.apiToken, url, 'n1'), 'x-plivo-signature-v2-nonce': 'n2' }), 403);
    assert.equal(await post({ 'x-plivo-signature-v2': signatureC(creds.apiToken, url, 'n1'), 'x-plivo-signature-v2-nonce': 'n1' }), 200);
    const unknown = new URLSearchParams({ CallUUID: 'x-2', From: '+919833330002', To: '+918000000009' }).toString();
    assert.equal(await post({ 'x-plivo-signature-v2': signatureC(creds.apiToken, url, 'n3'), 'x-plivo-signature-v2-nonce': 'n3' }, unknown), 404);
  });

  it('a malformed frame closes the stream 1007; the call is recorded streamError', async () => {
    const call = await fake.placeInbound('+919833330003', number);
    await until(() => call.stream?.open === true, 'the stream to open');
    await agentFinished(() => call.heard, 0, 1_000);
    call.stream!.raw(JSON.stringify({ event: 'dtmf', streamId: call.stream!.streamSid, dtmf: { digit: 'twelve' } }));
    await call.stream!.closed;
    assert.equal(call.streams[0]?.closeCode, 1007);
    const row = await endedCall(platform.store, '+919833330003');
    assert.equal(row.end_reason, 'streamError', shown(row.lines));
  });

  it('campaign calls: the Call API with our answer/ring/hangup URLs; answered over the stream, busy as 486, a REST 401 failed', async () => {
    const defs = createResourceDefinitions({ secretBox: platform.box });
    const campaignFor = async (apiToken?: string): Promise<string> => {
      seq += 1;
      const from = `+91804749${String(2900 + seq)}`;
      await platform.addNumber(from, 'Order line', provider(apiToken));
      return (await defs.campaign.repository.create(platform.store.db, platform.tenantId, campaignDoc(`C ${seq}`, from, 'Order line', { published: true }) as CampaignSpec)).id;
    };
    const send = async (campaignId: string, to: string): Promise<string> => {
      const res = await twirpRequest(control.port, { token, body: { CampaignID: campaignId, To: { PhoneNumber: to.slice(1) }, Callback: { URL: receiver.url }, ScheduledAt: { Time: new Date(clock.now()).toISOString() } } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return String(res.body.message_id);
    };
    let placed: FakeCallA | undefined;
    fake.onOutboundCall = (c) => (placed ??= c);
    fake.callees.set('+919844440002', { kind: 'busy' });
    const answered = await send(await campaignFor(), '+919844440001');
    assert.equal(await scheduler.runMessage(answered), 'dialing');
    await until(() => placed?.stream?.open === true, 'the callee to answer and the stream to open');
    await agentFinished(() => placed!.heard, 0, 1_500);
    await keyIn(placed!, '77#');
    await scheduler.settled();
    const row = await endedCall(platform.store, '+919844440001');
    assert.equal((row.variables as Record<string, unknown>).order_number, 77, shown(row.lines));
    const busy = await send(await campaignFor(), '+919844440002');
    const refused = await send(await campaignFor('revoked-token'), '+919844440003');
    for (const id of [busy, refused]) assert.equal(await scheduler.runMessage(id), 'dialing');
    await scheduler.settled();
    const attempt = (id: string) => platform.store.db.selectFrom('campaign_attempts').select(['status', 'sip_status']).where('message_id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(await attempt(answered), { status: 'completed', sip_status: 200 });
    assert.deepEqual(await attempt(busy), { status: 'busy', sip_status: 486 });
    assert.deepEqual(await attempt(refused), { status: 'failed', sip_status: null });
    await delivery.deliverDue();
    const reason = String(receiver.received.filter((r) => r.body.message_id === refused).at(-1)?.body.reason);
    assert.match(reason, /provider C POST \/v1\/Account\/\*\*\*\/Call\/: HTTP 401/);
    assert.ok(!reason.includes(creds.apiKey), 'the API Key (a secret) never appears in a reason');
    assert.deepEqual(receiver.statuses(answered), ['scheduled#0', 'ringing#1', 'answered#1', 'completed#1']);
    assert.deepEqual(receiver.statuses(busy), ['scheduled#0', 'ringing#1', 'busy#1']);
  });
});
