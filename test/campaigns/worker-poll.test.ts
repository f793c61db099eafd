import assert from 'node:assert/strict';
import { createLogger } from '../../core/logger.js';
import { startCampaignWorker, type CampaignWorker } from '../../control-api/features/campaigns/campaign-worker.js';
import { answeredCall, CallbackReceiver, ScriptedOriginator, seedCampaign, seedTenant, type SeededTenant } from '../helpers/campaign-support.js';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import type { RunningServer } from '../../control-api/platform/http/serve.js';
import { verifySignature } from '../../control-api/platform/webhooks/signing.js';
import { forEachStore } from '../helpers/stores.js';
import { startControl, twirpRequest } from './twirp-client.js';

const box = createSecretBox(Buffer.alloc(32, 7));
const logger = createLogger({ level: 'silent' });
const secret = 'acme-callback-signing-secret-0123';

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The worker as the platform runs it with the store poller (the only trigger on PGlite), end to end over HTTP. */
forEachStore('campaign worker with the store poller', (store) => {
  let tenant: SeededTenant;
  let campaignId: string;
  let control: RunningServer;
  let worker: CampaignWorker | undefined;
  const receiver = new CallbackReceiver();

  before(async () => {
    await receiver.start();
    tenant = await seedTenant(store().db, box, { clientId: 'acme', webhookSecret: secret, allowLoopback: true });
    campaignId = await seedCampaign(store().db, box, tenant.tenantId, 'Poller campaign', { maxRetries: 0 });
    control = await startControl(store());
  });
  after(async () => {
    await worker?.stop(0);
    await control.close(0);
    await receiver.stop();
  });

  it('places a SendMessage call within a poll interval and delivers every signed callback', async () => {
    const call = answeredCall();
    const originator = new ScriptedOriginator().queue((request) => {
      request.onRinging?.();
      setTimeout(() => call.hangUp({ durationMs: 1_000 }), 20);
      return call.result;
    });
    worker = await startCampaignWorker({ store: store(), logger, originator, secretBox: box, trigger: 'poll', pollMs: 200, workerId: 'poll-worker' });
    const sentAt = Date.now();
    const res = await twirpRequest(control.port, {
      token: tenant.token,
      body: { CampaignID: campaignId, To: { PhoneNumber: '14155550100' }, Callback: { URL: receiver.url, State: { crm: 'x-1' } }, ScheduledAt: { Time: new Date().toISOString() } },
    });
    assert.equal(res.status, 200);
    const id = String(res.body.message_id);
    await until(() => originator.requests.length === 1, 3_000);
    assert.ok(Date.now() - sentAt < 2_000, 'dialed within the poll interval');
    await until(() => receiver.statuses(id).length === 4, 5_000);
    assert.deepEqual(receiver.statuses(id), ['scheduled#0', 'ringing#1', 'answered#1', 'completed#1']);
    for (const delivered of receiver.received.filter((r) => r.body.message_id === id)) {
      assert.deepEqual(delivered.body.state, { crm: 'x-1' });
      assert.deepEqual(verifySignature(secret, String(delivered.headers['x-vap-signature']), delivered.raw), { ok: true });
    }
  });
});
