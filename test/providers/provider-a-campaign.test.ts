import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { FakeClock } from '../../core/clock.js';
import { LateBoundOriginator } from '../../bin/originator-registry.js';
import { CallbackDelivery } from '../../control-api/features/campaigns/callbacks.js';
import { CampaignScheduler } from '../../control-api/features/campaigns/campaign-scheduler.js';
import { CallbackReceiver } from '../helpers/campaign-support.js';
import type { CampaignInput, CampaignSpec } from '../../control-api/model/domain/campaign.js';
import type { RunningServer } from '../../control-api/platform/http/serve.js';
import { AnalysisWorker } from '../../control-api/features/insights/analysis-worker.js';
import { OfflineInsightExtractor } from '../../control-api/features/insights/offline-insight-extractor.js';
import { SafeHttp } from '../../control-api/platform/net/safe-http.js';
import { RoutingOriginator } from '../../control-api/features/providers/provider-telephony.js';
import { campaignDoc } from '../helpers/resource-documents.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { issueToken } from '../../control-api/model/tenants/api-tokens.js';
import { startCallsApp, type CallsApp } from '../calls/calls-harness.js';
import { startControl, twirpRequest } from '../campaigns/twirp-client.js';
import { FakeProviderA, type FakeCallA } from '../fakes/fake-provider-a.js';
import { trimmedFlite } from '../voice/callee-audio.js';
import { agentFinished, endedCall, shown, sleep, startProviderPlatform, until, type ProviderPlatform } from './provider-harness.js';

/**
 * Issue 17's end-to-end campaign over provider A: SendMessage over HTTP -> the scheduler ->
 * RoutingOriginator -> provider A's REST API (the fake) -> it rings, the callee answers, the fake
 * fetches our instructions and opens the media stream with the callee's flite voice -> the recipe
 * runs on the real voice pipeline -> status callbacks -> campaign callbacks -> post-call insights
 * -> the Master Report row. Then the unanswered outcomes (busy with its retry, no-answer, failed,
 * a REST refusal) as the campaign sees them.
 */
const accountSid = `AC${'3'.repeat(32)}`;
const authToken = 'provider-a-auth-token-0003';
/** 10:00 in Asia/Kolkata: the campaign clock, not the wall clock. */
const campaignNow = Date.parse('2026-03-02T04:30:00Z');

describe('campaign calls through provider A: SendMessage -> REST call -> stream -> recipe -> callbacks -> insights -> report', function () {
  this.timeout(180_000);
  const clock = new FakeClock(campaignNow);
  const receiver = new CallbackReceiver();
  let fake: FakeProviderA;
  let platform: ProviderPlatform;
  let control: RunningServer;
  let calls: CallsApp;
  let scheduler: CampaignScheduler;
  let delivery: CallbackDelivery;
  let token: string;
  let seq = 0;

  before(async () => {
    fake = await new FakeProviderA({ accountSid, authToken }).start();
    platform = await startProviderPlatform({ providerA: fake.apiBaseUrl });
    await receiver.start();
    const { store, logger } = platform;
    // SIP is not used by provider numbers: an unbound SIP originator would fail any call with 503.
    scheduler = new CampaignScheduler({ db: store.db, originator: new RoutingOriginator(new LateBoundOriginator(), platform.telephony), clock, logger, workerId: 'provider-a-worker' });
    delivery = new CallbackDelivery({ db: store.db, http: new SafeHttp({ allowlist: () => ['127.0.0.1'] }), clock, logger, secretFor: async () => 'provider-a-callback-secret-01' });
    control = await startControl(store, { clock });
    calls = await startCallsApp(store);
    token = (await issueToken(store.db, { tenantId: platform.tenantId, name: 'campaign', scopes: ['campaign'] })).token;
    await platform.addRecipe({
      name: 'Delivery slot',
      startBlockId: 'hello',
      globalSettings: { insights: [{ name: 'at_home', type: 'boolean', description: 'whether the callee will be at home tomorrow' }] },
      blocks: [
        { id: 'hello', type: 'message', settings: { text: 'Hello {{name}}, this is Acme Couriers.' } },
        { id: 'home', type: 'ask', settings: { prompt: 'Will you be at home tomorrow? Please say yes or no.', variables: [{ name: 'at_home', type: 'boolean', description: 'whether the callee is at home tomorrow' }] } },
        { id: 'bye', type: 'close', settings: { closingScript: 'Thank you. Goodbye.', disposition: 'slot_checked' } },
        { id: 'later', type: 'close', settings: { closingScript: 'We will call again. Goodbye.', disposition: 'no_answer' } },
      ],
      connections: [
        { from: 'hello', exit: 'next', to: 'home' },
        { from: 'home', exit: 'next', to: 'bye' },
        { from: 'home', exit: 'fallback', to: 'later' },
      ],
    } as never);
  });
  after(async () => {
    await calls?.close();
    await control?.close(0);
    await receiver.stop();
    await platform?.close();
    await fake?.stop();
  });

  async function campaign(extra: Partial<CampaignInput> = {}): Promise<string> {
    seq += 1;
    const from = `+1415557${String(1000 + seq)}`;
    await platform.addNumber(from, 'Delivery slot', { type: 'providerA', accountSid, authToken });
    const defs = createResourceDefinitions({ secretBox: platform.box });
    return (await defs.campaign.repository.create(platform.store.db, platform.tenantId, campaignDoc(`Provider A ${seq}`, from, 'Delivery slot', { published: true, ...extra }) as CampaignSpec)).id;
  }

  async function send(campaignId: string, to: string): Promise<string> {
    const res = await twirpRequest(control.port, {
      token,
      body: { CampaignID: campaignId, To: { PhoneNumber: to.slice(1) }, Variables: { name: 'Asha' }, Callback: { URL: receiver.url, State: { ticket: `T-${seq}` } }, ScheduledAt: { Time: new Date(clock.now()).toISOString() } },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return String(res.body.message_id);
  }

  const attempts = (id: string) => platform.store.db.selectFrom('campaign_attempts').select(['attempt_no', 'status', 'sip_status']).where('message_id', '=', id).orderBy('attempt_no').execute();

  it('an answering callee: the recipe runs over the stream, callbacks ringing/answered/completed, insights extracted, one Master Report row', async () => {
    const callee = '+919812340001';
    const answer = await trimmedFlite('Yes, I will be at home tomorrow.');
    let placed: FakeCallA | undefined;
    fake.onOutboundCall = (call) => (placed = call);
    const id = await send(await campaign(), callee);
    assert.equal(await scheduler.runMessage(id), 'dialing');
    await until(() => placed?.stream?.open === true, 'the callee to answer and the stream to open');
    const call = placed as FakeCallA;
    // The callee answers when asked, and again if the agent checks what it heard.
    let from = await agentFinished(() => call.heard, 0, 2_500);
    for (let i = 0; i < 3 && !call.endedWith; i++) {
      call.say(answer);
      const next = from + answer.length / 160;
      from = await Promise.race([agentFinished(() => call.heard, next, 300), call.ended.then(() => next)]);
    }
    await scheduler.settled();
    assert.equal(await call.ended, 'completed');
    // The REST call as the provider documents it.
    const create = fake.requests.find((r) => r.path === `/2010-04-01/Accounts/${accountSid}/Calls.json`);
    assert.equal(create?.form.get('To'), callee);
    assert.deepEqual(create?.form.getAll('StatusCallbackEvent'), ['initiated', 'ringing', 'answered', 'completed']);
    assert.equal(create?.form.get('Timeout'), '30');
    assert.equal(fake.webhookFailures.length, 0, JSON.stringify(fake.webhookFailures));

    const row = await endedCall(platform.store, callee);
    assert.equal(row.direction, 'outbound');
    assert.equal(row.message_id, id);
    assert.equal(row.disposition, 'slot_checked', shown(row.lines));
    assert.equal((row.variables as Record<string, unknown>).at_home, true, shown(row.lines));
    assert.equal(row.lines[0]?.text, 'Hello Asha, this is Acme Couriers.');
    assert.deepEqual((await attempts(id)).map((a) => a.status), ['completed']);

    await delivery.deliverDue();
    assert.deepEqual(receiver.statuses(id), ['scheduled#0', 'ringing#1', 'answered#1', 'completed#1']);
    assert.deepEqual(receiver.received.filter((r) => r.body.message_id === id).at(-1)?.body.state, { ticket: `T-${seq}` });

    const worker = new AnalysisWorker({ db: platform.store.db, logger: platform.logger, extractor: new OfflineInsightExtractor(), http: new SafeHttp({ allowlist: () => ['127.0.0.1'] }), tenantWebhook: async () => undefined, pollMs: 50 });
    worker.start();
    try {
      const deadline = Date.now() + 20_000;
      let analysed: { analysis_status: string; insights: unknown } | undefined;
      while (Date.now() < deadline) {
        analysed = await platform.store.db.selectFrom('calls').select(['analysis_status', 'insights']).where('id', '=', row.id).executeTakeFirst();
        if (analysed?.analysis_status === 'completed') break;
        await sleep(100);
      }
      assert.equal(analysed?.analysis_status, 'completed');
      assert.equal((analysed?.insights as Record<string, unknown>).at_home, true);
    } finally {
      await worker.stop();
    }

    const { campaign_id: campaignId } = await platform.store.db.selectFrom('calls').select('campaign_id').where('id', '=', row.id).executeTakeFirstOrThrow();
    const csv = await calls.get(`/v1/tenants/acme/reports/master.csv?campaign=${campaignId}`);
    assert.equal(csv.status, 200);
    const rows = parse(csv.bytes.toString('utf8'), { columns: true }) as Array<Record<string, string>>;
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.call_id, row.id);
    assert.equal(rows[0]?.['analysis.at_home'], 'true');
    assert.equal(rows[0]?.disposition, 'slot_checked');
  });

  it('busy (SIP 486 in the status callback) is the campaign\'s busy, retried after the interval, busy again final', async () => {
    const callee = '+919812340002';
    fake.callees.set(callee, { kind: 'busy' });
    const id = await send(await campaign({ maxRetries: 1, retryIntervalMinutes: 2, retryScenarios: ['busy'] }), callee);
    assert.equal(await scheduler.runMessage(id), 'dialing');
    await scheduler.settled();
    assert.equal(await scheduler.runMessage(id), 'not-due');
    clock.advance(2 * 60_000);
    assert.equal(await scheduler.runMessage(id), 'dialing');
    await scheduler.settled();
    assert.deepEqual((await attempts(id)).map((a) => [a.attempt_no, a.status, a.sip_status]), [[1, 'busy', 486], [2, 'busy', 486]]);
    await delivery.deliverDue();
    assert.deepEqual(receiver.statuses(id), ['scheduled#0', 'ringing#1', 'busy#1', 'rescheduled#2', 'ringing#2', 'busy#2']);
  });

  it('no-answer and failed come from the provider\'s final status; a REST refusal (bad credentials) fails the attempt without a call', async () => {
    const silent = '+919812340003';
    const broken = '+919812340004';
    fake.callees.set(silent, { kind: 'no-answer' });
    fake.callees.set(broken, { kind: 'failed', sipCode: 404 });
    const noAnswer = await send(await campaign(), silent);
    const failed = await send(await campaign(), broken);
    // A number whose stored Auth Token the provider no longer accepts.
    seq += 1;
    const wrong = `+1415557${String(1000 + seq)}`;
    await platform.addNumber(wrong, 'Delivery slot', { type: 'providerA', accountSid, authToken: 'a-revoked-auth-token' });
    const defs = createResourceDefinitions({ secretBox: platform.box });
    const refusedCampaign = (await defs.campaign.repository.create(platform.store.db, platform.tenantId, campaignDoc(`Provider A ${seq}`, wrong, 'Delivery slot', { published: true }) as CampaignSpec)).id;
    const refused = await send(refusedCampaign, '+919812340005');
    for (const id of [noAnswer, failed, refused]) assert.equal(await scheduler.runMessage(id), 'dialing');
    await scheduler.settled();
    assert.deepEqual((await attempts(noAnswer)).map((a) => [a.status, a.sip_status]), [['no-answer', 487]]);
    assert.deepEqual((await attempts(failed)).map((a) => [a.status, a.sip_status]), [['failed', 404]]);
    assert.deepEqual((await attempts(refused)).map((a) => [a.status, a.sip_status]), [['failed', null]]);
    await delivery.deliverDue();
    assert.deepEqual(receiver.statuses(noAnswer), ['scheduled#0', 'ringing#1', 'no-answer#1']);
    assert.deepEqual(receiver.statuses(failed), ['scheduled#0', 'ringing#1', 'failed#1']);
    assert.deepEqual(receiver.statuses(refused), ['scheduled#0', 'failed#1']);
    const reason = receiver.received.filter((r) => r.body.message_id === refused).at(-1)?.body.reason;
    assert.match(String(reason), /provider A POST .*Calls\.json: HTTP 401 Authenticate/);
    assert.doesNotMatch(String(reason), /revoked/, 'the credential never appears in a reason');
  });
});
