import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { FakeClock } from '../../core/clock.js';
import { LateBoundOriginator } from '../../bin/originator-registry.js';
import { CallbackDelivery } from '../../control-api/features/campaigns/callbacks.js';
import { CampaignScheduler } from '../../control-api/features/campaigns/campaign-scheduler.js';
import { CallbackReceiver } from '../helpers/campaign-support.js';
import type { CampaignSpec } from '../../control-api/model/domain/campaign.js';
import type { RunningServer } from '../../control-api/platform/http/serve.js';
import { SafeHttp } from '../../control-api/platform/net/safe-http.js';
import { RoutingOriginator } from '../../control-api/features/providers/provider-telephony.js';
import { campaignDoc } from '../helpers/resource-documents.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { issueToken } from '../../control-api/model/tenants/api-tokens.js';
import { startControl, twirpRequest } from '../campaigns/twirp-client.js';
import type { FakeCallA } from '../fakes/fake-provider-a.js';
import { FakeProviderB } from '../fakes/fake-provider-b.js';
import { trimmedFlite } from '../voice/callee-audio.js';
import { agentFinished, endedCall, shown, sleep, startProviderPlatform, until, voicedMs, type ProviderPlatform } from './provider-harness.js';

/**
 * Issue 17, provider B: the number's flow streams through its Voicebot applet, whose URL is our
 * endpoint (it answers with the call's stream URL); the provider authenticates with HTTP Basic
 * auth (API key and token); the stream carries 16-bit PCM in 100 ms chunks; campaign calls go
 * through Calls/connect with the number's Outbound App Id and status callbacks.
 */
const account = { accountSid: 'acme-b-account', apiKey: 'b-api-key-0001', apiToken: 'b-api-token-0001' };
const number = '+918047491801';
const campaignNow = Date.parse('2026-03-02T04:30:00Z');

describe('provider B: Voicebot stream, basic auth, Calls/connect', function () {
  this.timeout(120_000);
  const clock = new FakeClock(campaignNow);
  const receiver = new CallbackReceiver();
  let fake: FakeProviderB;
  let platform: ProviderPlatform;
  let control: RunningServer;
  let scheduler: CampaignScheduler;
  let delivery: CallbackDelivery;
  let token: string;
  let seq = 0;
  const provider = (extra: Partial<typeof account> = {}) => ({ type: 'providerB' as const, ...account, outboundAppId: '4711', subDomain: 'api.in.exotel.com', ...extra });

  before(async () => {
    fake = await new FakeProviderB(account).start();
    platform = await startProviderPlatform({ providerA: 'http://127.0.0.1:9', providerB: fake.apiBaseUrl });
    fake.o.flowBaseUrl = `${platform.telephony.publicBaseUrl}/providers/b`;
    await receiver.start();
    scheduler = new CampaignScheduler({ db: platform.store.db, originator: new RoutingOriginator(new LateBoundOriginator(), platform.telephony), clock, logger: platform.logger, workerId: 'provider-b-worker' });
    delivery = new CallbackDelivery({ db: platform.store.db, http: new SafeHttp({ allowlist: () => ['127.0.0.1'] }), clock, logger: platform.logger, secretFor: async () => 'provider-b-callback-secret-01' });
    control = await startControl(platform.store, { clock });
    token = (await issueToken(platform.store.db, { tenantId: platform.tenantId, name: 'campaign', scopes: ['campaign'] })).token;
    await platform.addRecipe({
      name: 'Order desk',
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
    await platform.addNumber(number, 'Order desk', provider());
  });
  after(async () => {
    await control?.close(0);
    await receiver.stop();
    await platform?.close();
    await fake?.stop();
  });

  async function keyIn(call: FakeCallA, keys: string): Promise<void> {
    for (const key of keys) {
      call.stream?.dtmf(key);
      await sleep(120);
    }
  }

  it('inbound: the applet gets the stream URL, barge-in sends clear, DTMF reaches the Ask block, closing our stream ends the call; recorded', async () => {
    const call = await fake.placeInbound('+919811110001', number);
    await until(() => call.stream?.open === true, 'the stream to open');
    // Synthesised before the wait: flite's time (longer with the cores busy) would come out of
    // the second or so left of the agent's line, and words said after it interrupt nothing.
    const words = await trimmedFlite('I do not know it.');
    await until(() => voicedMs(call.heard) >= 1_900, 'the agent to be asking');
    call.say(words);
    await until(() => call.clears >= 1, 'a clear frame');
    await agentFinished(() => call.heard, call.heard.length, 600);
    await keyIn(call, '4821#');
    assert.equal(await call.ended, 'completed');
    const row = await endedCall(platform.store, '+919811110001');
    assert.equal((row.variables as Record<string, unknown>).order_number, 4821, shown(row.lines));
    assert.equal(row.end_reason, 'closed');
    assert.equal(row.lines.at(-1)?.text, 'Thank you. Goodbye.');
    assert.ok(row.lines.some((l) => l.interrupted), shown(row.lines));
    assert.ok(call.marksEchoed.length >= 2, 'marks went out and were echoed');
    assert.equal(fake.webhookFailures.length, 0, JSON.stringify(fake.webhookFailures));
  });

  it('refuses the applet\'s request and the stream handshake without the number\'s API key and token (403)', async () => {
    const base = `${platform.telephony.publicBaseUrl}/providers/b/voicebot?CallSid=abc&CallFrom=%2B919811110002&CallTo=${encodeURIComponent(number)}&Direction=incoming`;
    const wrong = `Basic ${Buffer.from('b-api-key-0001:not-the-token').toString('base64')}`;
    assert.equal((await fetch(base)).status, 403);
    assert.equal((await fetch(base, { headers: { Authorization: wrong } })).status, 403);
    const right = `Basic ${Buffer.from(`${account.apiKey}:${account.apiToken}`).toString('base64')}`;
    const res = await fetch(base, { headers: { Authorization: right } });
    assert.equal(res.status, 200);
    const { url } = (await res.json()) as { url: string };
    assert.match(url, /^ws:\/\/127\.0\.0\.1:\d+\/providers\/b\/calls\/[\w-]+\/stream$/);
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url, { headers: { Authorization: wrong } });
      ws.once('unexpected-response', (_req, r) => resolve(r.statusCode ?? 0));
      ws.once('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    assert.equal(refused, 403);
    // Another call (CallSid) to a number not on B here.
    assert.equal((await fetch(base.replace('CallSid=abc', 'CallSid=abd').replace(encodeURIComponent(number), '%2B918000000000'), { headers: { Authorization: right } })).status, 404);
  });

  it('a malformed frame (PCM with an odd byte count) closes the stream 1007 and the call is recorded streamError', async () => {
    const call = await fake.placeInbound('+919811110003', number);
    await until(() => call.stream?.open === true, 'the stream to open');
    await agentFinished(() => call.heard, 0, 1_000);
    call.stream!.raw(JSON.stringify({ event: 'media', stream_sid: call.stream!.streamSid, media: { payload: Buffer.from([1, 2, 3]).toString('base64') } }));
    await call.stream!.closed;
    assert.equal(call.stream?.closeCode ?? call.streams[0]?.closeCode, 1007);
    const row = await endedCall(platform.store, '+919811110003');
    assert.equal(row.end_reason, 'streamError', shown(row.lines));
    assert.equal(row.lines[0]?.text, 'Welcome to Acme.');
  });

  it('a dropped stream (B reconnects nothing) ends the call when B\'s flow moves on to the Connect applet, which dials nobody; the record keeps what was said (streamLost)', async () => {
    const call = await fake.placeInbound('+919811110004', number);
    await until(() => call.stream?.open === true, 'the stream to open');
    await agentFinished(() => call.heard, 0, 1_000);
    call.stream!.drop();
    const row = await endedCall(platform.store, '+919811110004', 15_000);
    assert.equal(row.end_reason, 'streamLost', shown(row.lines));
    assert.equal(row.lines[0]?.text, 'Welcome to Acme.');
    assert.equal(await call.ended, 'completed');
    const connect = fake.flowRequests.find((r) => r.callSid === call.sid && r.applet === 'connect');
    assert.deepEqual(JSON.parse(connect?.body ?? '{}'), { fetch_after_attempt: false, destination: { numbers: [] } });
  });

  it('campaign calls: Calls/connect with the app flow and CustomField; answered over the stream, busy as 486, a REST 401 failed', async () => {
    const defs = createResourceDefinitions({ secretBox: platform.box });
    const campaignFor = async (apiToken = account.apiToken): Promise<string> => {
      seq += 1;
      const from = `+91804749${String(1900 + seq)}`;
      await platform.addNumber(from, 'Order desk', provider({ apiToken }));
      return (await defs.campaign.repository.create(platform.store.db, platform.tenantId, campaignDoc(`B ${seq}`, from, 'Order desk', { published: true }) as CampaignSpec)).id;
    };
    const send = async (campaignId: string, to: string): Promise<string> => {
      const res = await twirpRequest(control.port, { token, body: { CampaignID: campaignId, To: { PhoneNumber: to.slice(1) }, Callback: { URL: receiver.url }, ScheduledAt: { Time: new Date(clock.now()).toISOString() } } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return String(res.body.message_id);
    };
    let placed: FakeCallA | undefined;
    fake.onOutboundCall = (c) => (placed ??= c);
    fake.callees.set('+919822220002', { kind: 'busy' });
    const answered = await send(await campaignFor(), '+919822220001');
    assert.equal(await scheduler.runMessage(answered), 'dialing');
    await until(() => placed?.stream?.open === true, 'the callee to answer and the stream to open');
    await agentFinished(() => placed!.heard, 0, 1_500);
    await keyIn(placed!, '77#');
    await scheduler.settled();
    const create = fake.requests.find((r) => r.path.endsWith('/Calls/connect.json') && r.form.get('From') === '+919822220001');
    assert.equal(create?.form.get('Url'), `http://my.exotel.com/${account.accountSid}/exoml/start_voice/4711`);
    assert.ok(create?.form.get('CustomField'));
    const row = await endedCall(platform.store, '+919822220001');
    assert.equal(row.direction, 'outbound');
    assert.equal((row.variables as Record<string, unknown>).order_number, 77, shown(row.lines));
    const busy = await send(await campaignFor(), '+919822220002');
    const refused = await send(await campaignFor('revoked-token'), '+919822220003');
    for (const id of [busy, refused]) assert.equal(await scheduler.runMessage(id), 'dialing');
    await scheduler.settled();
    const attempt = (id: string) => platform.store.db.selectFrom('campaign_attempts').select(['status', 'sip_status']).where('message_id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(await attempt(answered), { status: 'completed', sip_status: 200 });
    assert.deepEqual(await attempt(busy), { status: 'busy', sip_status: 486 });
    assert.deepEqual(await attempt(refused), { status: 'failed', sip_status: null });
    await delivery.deliverDue();
    assert.deepEqual(receiver.statuses(answered), ['scheduled#0', 'answered#1', 'completed#1']);
    assert.deepEqual(receiver.statuses(busy), ['scheduled#0', 'busy#1']);
  });
});
