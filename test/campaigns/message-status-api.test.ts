import assert from 'node:assert/strict';
import { FakeClock } from '../../core/clock.js';
import { createLogger } from '../../core/logger.js';
import type { OriginateResult } from '../../core/ports/originator.js';
import { CallbackDelivery } from '../../control-api/features/campaigns/callbacks.js';
import { CampaignScheduler } from '../../control-api/features/campaigns/campaign-scheduler.js';
import { answeredCall, CallbackReceiver, ScriptedOriginator, seedCampaign, seedTenant, type SeededTenant } from '../helpers/campaign-support.js';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import { SafeHttp } from '../../control-api/platform/net/safe-http.js';
import { issueToken } from '../../control-api/model/tenants/api-tokens.js';
import { startManagementApp, type ManagementHarness } from '../helpers/management-app.js';
import { forEachStore } from '../helpers/stores.js';
import { twirpRequest } from './twirp-client.js';

/**
 * GET /v1/tenants/{clientId}/campaigns/{campaignId}/messages/{messageId}: a message sent through
 * SendMessage on the real control app, placed by the real scheduler (the Originator port scripted:
 * busy, then answered), its callbacks delivered to an HTTP receiver on loopback that fails once.
 * Every answer is validated against the served OpenAPI document by the harness client.
 */
const box = createSecretBox(Buffer.alloc(32, 7));
const logger = createLogger({ level: 'silent' });
const minutes = 60_000;
const start = Date.parse('2030-03-04T09:00:00Z');
const busy: OriginateResult = { outcome: 'busy', sipStatus: 486 };

interface Status {
  status: string;
  final: boolean;
  nextAttemptAt: string | null;
  waitReason: string | null;
  attemptsMade: number;
  attempts: Array<{ attempt: number; status: string; sipStatus: number | null; callId: string | null; answeredAt: string | null; endedAt: string | null; callerNumber: string }>;
  callback: { url: string; state: Record<string, unknown>; deliveries: Array<{ sequence: number; event: string; attempt: number; final: boolean; delivery: string; tries: number; lastStatus: number | null; nextTryAt: string | null; deliveredAt: string | null }> } | null;
}

forEachStore('campaign message status (management API)', (store) => {
  const receiver = new CallbackReceiver();
  const clock = new FakeClock(start);
  let h: ManagementHarness;
  let acme: SeededTenant;
  let globex: SeededTenant;
  let campaignId: string;
  let otherCampaign: string;
  let scheduler: CampaignScheduler;
  let delivery: CallbackDelivery;
  const originator = new ScriptedOriginator();

  const send = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const res = await twirpRequest(h.server.port, { token: acme.token, headers, body: { CampaignID: campaignId, To: { PhoneNumber: '919876543210' }, ScheduledAt: { Time: '2030-03-04T09:00:00Z' }, ...body } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return String(res.body['message_id']);
  };
  const path = (id: string, campaign = campaignId, clientId = 'acme') => `/v1/tenants/${clientId}/campaigns/${campaign}/messages/${id}`;
  const status = async (id: string, token?: string): Promise<Status> => {
    const res = await h.client(token).get(path(id));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    return res.body as unknown as Status;
  };

  before(async () => {
    await receiver.start();
    const db = store().db;
    acme = await seedTenant(db, box, { clientId: 'acme', timezone: 'UTC', allowLoopback: true });
    globex = await seedTenant(db, box, { clientId: 'globex' });
    campaignId = await seedCampaign(db, box, acme.tenantId, 'Renewals', { maxRetries: 1, retryIntervalMinutes: 5 });
    otherCampaign = await seedCampaign(db, box, acme.tenantId, 'Other');
    h = await startManagementApp(store(), {}, { campaigns: { clock } });
    scheduler = new CampaignScheduler({ db, originator, clock, logger, workerId: 'status-worker' });
    delivery = new CallbackDelivery({ db, http: new SafeHttp({ allowlist: () => ['127.0.0.1'] }), clock, logger, secretFor: async () => undefined, backoffMs: () => 30_000 });
  });
  after(async () => {
    await h.close();
    await receiver.stop();
  });

  it('follows a message from scheduled through a busy attempt and a retry to completed, with every callback delivery', async () => {
    const id = await send({ Variables: { name: 'Asha' }, Callback: { URL: receiver.url, State: { lead: 'L-7' } } }, { 'Idempotency-Key': 'status-1' });

    const waiting = await status(id);
    assert.deepEqual(
      { ...waiting, createdAt: undefined, updatedAt: undefined },
      {
        id, tenant: 'acme', campaignId, to: '+919876543210', status: 'scheduled', final: false,
        scheduledAt: '2030-03-04T09:00:00.000Z', bypassCallingWindow: false, nextAttemptAt: '2030-03-04T09:00:00.000Z', waitReason: 'initial',
        attemptsMade: 0, idempotencyKey: 'status-1', variables: { name: 'Asha' }, attempts: [],
        callback: {
          url: receiver.url, state: { lead: 'L-7' },
          deliveries: [{
            sequence: 1, event: 'scheduled', attempt: 0, final: false, createdAt: '2030-03-04T09:00:00.000Z', delivery: 'pending', tries: 0,
            lastStatus: null, lastError: null, nextTryAt: '2030-03-04T09:00:00.000Z', deliveredAt: null, givenUpAt: null,
          }],
        },
        createdAt: undefined, updatedAt: undefined,
      },
    );

    // Attempt 1: busy; the first callback delivery is answered 503 and stays pending.
    originator.queue(() => busy);
    assert.equal(await scheduler.runMessage(id), 'dialing');
    await scheduler.settled();
    receiver.failNext(1);
    await delivery.deliverDue();
    const retrying = await status(id);
    assert.equal(retrying.status, 'scheduled');
    assert.equal(retrying.waitReason, 'retry');
    assert.equal(retrying.nextAttemptAt, new Date(start + 5 * minutes).toISOString());
    assert.equal(retrying.attemptsMade, 1);
    assert.equal(retrying.attempts.length, 1);
    const [first] = retrying.attempts;
    assert.equal(first!.status, 'busy');
    assert.equal(first!.sipStatus, 486);
    assert.match(first!.callerNumber, /^\+9144/);
    assert.equal(first!.answeredAt, null);
    assert.equal(first!.endedAt, new Date(start).toISOString());
    // The attempt that never connected has its call record, and the link leads to it.
    assert.ok(first!.callId);
    const call = await h.client().get(`/v1/tenants/acme/calls/${first!.callId}`);
    assert.equal(call.status, 200);
    assert.equal(call.body['messageId'], id);
    assert.equal(call.body['attempt'], 1);
    assert.deepEqual(retrying.callback!.deliveries.map((d) => [d.sequence, d.event, d.attempt]), [[1, 'scheduled', 0], [2, 'busy', 1], [3, 'rescheduled', 2]]);
    const failed = retrying.callback!.deliveries.filter((d) => d.delivery === 'pending');
    assert.equal(failed.length, 1, 'one delivery was answered 503');
    assert.equal(failed[0]!.tries, 1);
    assert.equal(failed[0]!.lastStatus, 503);
    assert.equal(failed[0]!.nextTryAt, new Date(start + 30_000).toISOString());
    for (const d of retrying.callback!.deliveries.filter((x) => x.delivery === 'delivered')) {
      assert.equal(d.tries, 1);
      assert.equal(d.deliveredAt, new Date(start).toISOString());
      assert.equal(d.nextTryAt, null);
    }

    // Attempt 2 after the retry interval: answered and completed; the failed callback is retried.
    clock.advance(5 * minutes);
    const answered = answeredCall();
    originator.queue(() => {
      setTimeout(() => answered.hangUp({ durationMs: 30_000 }), 1);
      return answered.result;
    });
    assert.equal(await scheduler.runMessage(id), 'dialing');
    await scheduler.settled();
    await delivery.deliverDue();
    const done = await status(id);
    assert.equal(done.status, 'completed');
    assert.equal(done.final, true);
    assert.equal(done.nextAttemptAt, null);
    assert.equal(done.waitReason, null);
    assert.deepEqual(done.attempts.map((a) => [a.attempt, a.status, a.sipStatus]), [[1, 'busy', 486], [2, 'completed', 200]]);
    assert.equal(done.attempts[1]!.answeredAt, new Date(start + 5 * minutes).toISOString());
    assert.deepEqual(done.callback!.deliveries.map((d) => `${d.event}#${d.attempt}:${d.delivery}`), [
      'scheduled#0:delivered', 'busy#1:delivered', 'rescheduled#2:delivered', 'answered#2:delivered', 'completed#2:delivered',
    ]);
    assert.equal(done.callback!.deliveries.at(-1)!.final, true);
    assert.equal(done.callback!.deliveries.find((d) => d.lastStatus === 204 && d.tries === 2)?.deliveredAt, new Date(start + 5 * minutes).toISOString());
    // What the receiver got agrees with the delivery states.
    assert.deepEqual(receiver.statuses(id), ['scheduled#0', 'busy#1', 'rescheduled#2', 'answered#2', 'completed#2']);
  });

  it('shows a message without Callback.URL with callback null', async () => {
    const id = await send({});
    const view = await status(id);
    assert.equal(view.callback, null);
    assert.equal(view.status, 'scheduled');
  });

  describe('credentials and scoping', () => {
    let id: string;
    before(async () => {
      id = await send({});
    });

    it('answers the operator, a management token and the campaign token SendMessage took', async () => {
      const management = await issueToken(store().db, { tenantId: acme.tenantId, name: 'ops', scopes: ['management'] });
      for (const token of [undefined, management.token, acme.token]) assert.equal((await status(id, token)).status, 'scheduled');
    });

    it('answers 401 without a token or with a token of another scope', async () => {
      const sandbox = await issueToken(store().db, { tenantId: acme.tenantId, name: 'plants', scopes: ['sandbox'] });
      for (const token of ['', sandbox.token, 'vap_nothing']) {
        const res = await h.client(token).get(path(id));
        assert.equal(res.status, 401, token);
        assert.equal(res.body['code'], 'unauthenticated');
      }
    });

    it("answers 404 for another tenant's token, another campaign, a missing message or ids that cannot exist", async () => {
      const cases: Array<[string, string | undefined]> = [
        [path(id), globex.token],
        [path(id, campaignId, 'globex'), undefined],
        [path(id, otherCampaign), undefined],
        [path('00000000-0000-4000-8000-000000000000'), undefined],
        [path('not-a-uuid'), undefined],
        [path(id, 'not-a-uuid'), undefined],
        [path(id, campaignId, 'nobody'), undefined],
      ];
      for (const [url, token] of cases) {
        const res = await h.client(token).get(url);
        assert.equal(res.status, 404, url);
        assert.equal(res.body['code'], 'not_found');
      }
    });
  });
});
