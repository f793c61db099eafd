import assert from 'node:assert/strict';
import { FakeClock } from '../../core/clock.js';
import { createLogger } from '../../core/logger.js';
import { CallbackDelivery } from '../../control-api/features/campaigns/callbacks.js';
import { CampaignScheduler } from '../../control-api/features/campaigns/campaign-scheduler.js';
import { CallbackReceiver } from '../helpers/campaign-support.js';
import type { CampaignInput, CampaignSpec } from '../../control-api/model/domain/campaign.js';
import type { RunningServer } from '../../control-api/platform/http/serve.js';
import { SafeHttp } from '../../control-api/platform/net/safe-http.js';
import { campaignDoc, numberDoc, testBox, trunkDoc } from '../helpers/resource-documents.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { issueToken } from '../../control-api/model/tenants/api-tokens.js';
import { fixtureOriginator, startGatewayFixture, type GatewayFixture } from '../gateway/gateway-harness.js';
import { startSippUas } from '../gateway/outbound-sipp-uas.js';
import { startControl, twirpRequest } from './twirp-client.js';

/**
 * Done-when of the campaign issue, end to end: SendMessage over HTTP against PostgreSQL, the
 * scheduler (FakeClock for due times and retry intervals), the gateway's real SIP Originator,
 * SIPp UAS scenarios as the callee, and the callbacks received by a local HTTP server.
 */
describe('campaign calls to SIPp: endpoint -> scheduler -> SIP Originator -> callbacks', function () {
  this.timeout(90_000);
  const box = testBox();
  const receiver = new CallbackReceiver();
  const logger = createLogger({ level: 'silent' });
  let fx: GatewayFixture;
  let control: RunningServer;
  let scheduler: CampaignScheduler;
  let delivery: CallbackDelivery;
  let token: string;
  let seq = 0;
  const clock = new FakeClock(Date.now());

  before(async () => {
    fx = await startGatewayFixture();
    await receiver.start();
    token = (await issueToken(fx.store.db, { tenantId: fx.ids.tenantId, name: 'campaign', scopes: ['campaign'] })).token;
    // The callback receiver is on loopback, which SendMessage refuses unless the tenant allows it.
    await fx.store.db.updateTable('tenants').set({ settings: JSON.stringify({ ssrfAllowlist: ['127.0.0.1'] }) }).where('id', '=', fx.ids.tenantId).execute();
    const originator = fixtureOriginator(fx, box);
    scheduler = new CampaignScheduler({ db: fx.store.db, originator, clock, logger, workerId: 'sipp-worker' });
    delivery = new CallbackDelivery({ db: fx.store.db, http: new SafeHttp({ allowlist: () => ['127.0.0.1'] }), clock, logger, secretFor: async () => 'sipp-test-callback-secret-0001' });
    control = await startControl(fx.store, { clock });
  });
  after(async () => {
    await control?.close(0);
    await receiver.stop();
    await fx?.close();
  });

  /** A trunk to SIPp's port, a number on it and a published campaign using that number. */
  async function campaignTo(port: number, extra: Partial<CampaignInput>): Promise<string> {
    const defs = createResourceDefinitions({ secretBox: box });
    seq += 1;
    await defs.sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc(`sipp-${seq}`, {
      inbound: { terminationAddresses: [`127.0.0.${60 + seq}`], dids: [] },
      outbound: { address: '127.0.0.1', port, transport: 'udp', username: 'acme-out', password: 'trunk-secret-1' },
    }) as never);
    const number = `+91445550${String(seq).padStart(4, '0')}`;
    await defs.phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(number, 'Flow', { provider: { type: 'customSipTrunk', trunk: `sipp-${seq}` } }) as never);
    const stored = await defs.campaign.repository.create(fx.store.db, fx.ids.tenantId, campaignDoc(`SIPp ${seq}`, number, 'Flow', { published: true, ...extra }) as CampaignSpec);
    return stored.id;
  }

  async function send(campaignId: string): Promise<string> {
    const res = await twirpRequest(control.port, {
      token,
      body: { CampaignID: campaignId, To: { PhoneNumber: '919812345678' }, Callback: { URL: receiver.url, State: { ticket: `T-${seq}` } }, ScheduledAt: { Time: new Date(clock.now()).toISOString() } },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return String(res.body.message_id);
  }

  async function runDue(id: string): Promise<void> {
    assert.equal(await scheduler.runMessage(id), 'dialing');
    await scheduler.settled();
    await delivery.deliverDue();
  }

  const bodies = (id: string) => receiver.received.filter((r) => r.body.message_id === id).sort((a, b) => Number(a.body.sequence) - Number(b.body.sequence)).map((r) => r.body);
  const attempts = (id: string) => fx.store.db.selectFrom('campaign_attempts').select(['attempt_no', 'status', 'sip_status']).where('message_id', '=', id).orderBy('attempt_no').execute();

  it('an answering callee: ringing, answered, completed on the callee BYE', async () => {
    const uas = await startSippUas('uas-answer.xml');
    const id = await send(await campaignTo(uas.port, {}));
    await runDue(id);
    assert.equal((await uas.done).exitCode, 0);
    assert.deepEqual(receiver.statuses(id), ['scheduled#0', 'ringing#1', 'answered#1', 'completed#1']);
    const completed = bodies(id).at(-1);
    assert.equal(completed?.reason, 'remote-bye');
    assert.deepEqual(completed?.state, { ticket: `T-${seq}` });
  });

  it('a callee that rings out: CANCEL after the ring duration, no-answer', async () => {
    const uas = await startSippUas('uas-ring-no-answer.xml', { timeoutMs: 40_000 });
    const id = await send(await campaignTo(uas.port, { ringDurationSeconds: 15, retryScenarios: ['busy'] }));
    const started = Date.now();
    await runDue(id);
    const rang = Date.now() - started;
    assert.ok(rang >= 14_500 && rang < 20_000, `rang ${rang} ms`);
    assert.deepEqual((await attempts(id)).map((a) => [a.status, a.sip_status]), [['no-answer', 487]]);
    assert.deepEqual(receiver.statuses(id), ['scheduled#0', 'ringing#1', 'no-answer#1']);
    assert.equal(bodies(id).at(-1)?.final, true);
    await uas.done;
  });

  it('486 Busy Here twice: busy, a retry after the interval, busy again (final)', async () => {
    const uas = await startSippUas('uas-486.xml', { calls: 2 });
    const campaignId = await campaignTo(uas.port, { maxRetries: 1, retryIntervalMinutes: 2, retryScenarios: ['busy'] });
    const id = await send(campaignId);
    await runDue(id);
    assert.equal(await scheduler.runMessage(id), 'not-due');
    clock.advance(2 * 60_000);
    await runDue(id);
    assert.deepEqual((await attempts(id)).map((a) => [a.attempt_no, a.status, a.sip_status]), [[1, 'busy', 486], [2, 'busy', 486]]);
    assert.deepEqual(receiver.statuses(id), ['scheduled#0', 'busy#1', 'rescheduled#2', 'busy#2']);
    assert.deepEqual(bodies(id).map((b) => b.final), [false, false, false, true]);
    assert.equal((await uas.done).exitCode, 0);
    // The client holding the message_id reads the same story with its campaign token.
    const res = await fetch(`${control.url}/v1/tenants/acme/campaigns/${campaignId}/messages/${id}`, { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    const status = (await res.json()) as { status: string; final: boolean; attempts: Array<{ status: string; sipStatus: number; callId: string | null }>; callback: { deliveries: Array<{ event: string; delivery: string }> } };
    assert.equal(status.status, 'busy');
    assert.equal(status.final, true);
    assert.deepEqual(status.attempts.map((a) => [a.status, a.sipStatus, typeof a.callId]), [['busy', 486, 'string'], ['busy', 486, 'string']]);
    assert.deepEqual(status.callback.deliveries.map((d) => `${d.event}:${d.delivery}`), ['scheduled:delivered', 'busy:delivered', 'rescheduled:delivered', 'busy:delivered']);
  });

  it('503 Service Unavailable: failed with the SIP status, not retried when failed is not a scenario', async () => {
    const uas = await startSippUas('uas-503.xml');
    const id = await send(await campaignTo(uas.port, { maxRetries: 3, retryScenarios: ['busy', 'noAnswer'] }));
    await runDue(id);
    assert.deepEqual((await attempts(id)).map((a) => [a.status, a.sip_status]), [['failed', 503]]);
    assert.deepEqual(receiver.statuses(id), ['scheduled#0', 'failed#1']);
    const message = await fx.store.db.selectFrom('campaign_messages').select('status').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(message.status, 'failed');
    await uas.done;
  });
});
