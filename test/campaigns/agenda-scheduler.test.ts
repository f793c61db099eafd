import assert from 'node:assert/strict';
import { createLogger } from '../../core/logger.js';
import type { OriginateResult } from '../../core/ports/originator.js';
import { campaignEnqueuer, startCampaignWorker, type CampaignWorker } from '../../control-api/features/campaigns/campaign-worker.js';
import type { AgendaJobs } from '../../control-api/features/campaigns/agenda-jobs.js';
import { CallbackReceiver, ScriptedOriginator, seedCampaign, seedTenant, type SeededTenant } from '../helpers/campaign-support.js';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import type { RunningServer } from '../../control-api/platform/http/serve.js';
import type { Store } from '../../control-api/platform/store/database.js';
import { freshStore } from '../helpers/stores.js';
import { startControl, twirpRequest } from './twirp-client.js';

const box = createSecretBox(Buffer.alloc(32, 7));
const logger = createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const busy: OriginateResult = { outcome: 'busy', sipStatus: 486 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(condition: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(25);
  }
}

/** Agenda needs a PostgreSQL server (it speaks the pg protocol), so this suite runs on the private cluster only. */
describe('campaign jobs through Agenda 6 on PostgreSQL', function () {
  this.timeout(60_000);
  let store: Store;
  let tenant: SeededTenant;
  let campaignId: string;
  let control: RunningServer;
  let jobs: AgendaJobs | undefined;
  const receiver = new CallbackReceiver();
  const workers: CampaignWorker[] = [];

  const start = async (originator: ScriptedOriginator, workerId: string, reconcile = { reconcileGraceMs: 600_000, pollMs: 10_000 }) => {
    const worker = await startCampaignWorker({ store, logger, originator, secretBox: box, workerId, trigger: 'agenda', ...reconcile });
    workers.push(worker);
    return worker;
  };
  const sendAt = async (dueAt: number) => {
    const res = await twirpRequest(control.port, {
      token: tenant.token,
      body: { CampaignID: campaignId, To: { PhoneNumber: '14155550100' }, Callback: { URL: receiver.url }, ScheduledAt: { Time: new Date(dueAt).toISOString().replace(/\.\d+Z$/, 'Z') } },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return String(res.body.message_id);
  };

  before(async () => {
    store = await freshStore('postgres');
    await receiver.start();
    tenant = await seedTenant(store.db, box, { clientId: 'acme', webhookSecret: 'acme-callback-signing-secret-0123', allowLoopback: true });
    campaignId = await seedCampaign(store.db, box, tenant.tenantId, 'Agenda campaign');
    jobs = await campaignEnqueuer(store, logger, 'test-control');
    control = await startControl(store, { enqueue: (id, at) => jobs!.enqueue(id, at) });
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop(0)));
  });
  after(async () => {
    await control?.close(0);
    await jobs?.close();
    await receiver.stop();
    await store?.close();
  });

  it('rings when the job falls due, not before, and reports through the callback', async () => {
    const originator = new ScriptedOriginator().otherwise(() => busy);
    const dialedAt: number[] = [];
    originator.otherwise(() => {
      dialedAt.push(Date.now());
      return busy;
    });
    await start(originator, 'worker-1');
    const due = Math.ceil((Date.now() + 2_000) / 1000) * 1000; // whole seconds: the Z form has no fraction
    const id = await sendAt(due);
    await sleep(due - Date.now() - 300);
    assert.equal(originator.requests.length, 0, 'not dialed before the due time');
    // The script runs after the dial is recorded (beforeInvite): wait for the INVITE itself.
    await until(() => dialedAt.length === 1, 5_000);
    assert.equal(originator.requests.length, 1);
    assert.ok(dialedAt[0]! >= due, `dialed ${dialedAt[0]! - due} ms early`);
    assert.ok(dialedAt[0]! - due < 3_000, `dialed ${dialedAt[0]! - due} ms late`);
    await until(() => receiver.statuses(id).length === 2, 5_000);
    assert.deepEqual(receiver.statuses(id), ['scheduled#0', 'busy#1']);
  });

  it('places each call exactly once with two workers competing for 30 due jobs', async () => {
    const a = new ScriptedOriginator().otherwise(() => busy);
    const b = new ScriptedOriginator().otherwise(() => busy);
    await start(a, 'worker-a');
    await start(b, 'worker-b');
    const due = Math.ceil((Date.now() + 1_500) / 1000) * 1000;
    const ids = await Promise.all(Array.from({ length: 30 }, () => sendAt(due)));
    // A duplicate job for the same message (as after a retried enqueue) must not ring twice.
    await Promise.all(ids.slice(0, 10).map((id) => jobs!.enqueue(id, due)));
    await until(() => a.requests.length + b.requests.length >= 30, 10_000);
    await sleep(1_000);
    const dialed = [...a.requests, ...b.requests].map((r) => r.context.messageId);
    assert.equal(dialed.length, 30);
    assert.equal(new Set(dialed).size, 30);
    const rows = await store.db.selectFrom('campaign_attempts').select(['message_id']).where('message_id', 'in', ids).execute();
    assert.equal(rows.length, 30);
  });

  it('keeps a job across a worker restart: the next worker places the call', async () => {
    const first = new ScriptedOriginator().otherwise(() => busy);
    const worker = await start(first, 'worker-old');
    const due = Math.ceil((Date.now() + 2_000) / 1000) * 1000;
    const id = await sendAt(due);
    // Let the old worker take the job first (Agenda holds it locked until due), as in a real restart.
    await sleep(300);
    await worker.stop(0);
    workers.splice(workers.indexOf(worker), 1);
    const second = new ScriptedOriginator().otherwise(() => busy);
    await start(second, 'worker-new');
    await until(() => second.requests.length === 1, 6_000);
    assert.equal(first.requests.length, 0);
    assert.equal(second.requests[0]?.context.messageId, id);
  });

  it('reconciles a stored message whose job was lost (the store poller runs it after the grace period)', async () => {
    const originator = new ScriptedOriginator().otherwise(() => busy);
    const lostControl = await startControl(store); // no enqueue: as if the job insert had failed
    try {
      const res = await twirpRequest(lostControl.port, {
        token: tenant.token,
        body: { CampaignID: campaignId, To: { PhoneNumber: '14155550100' }, ScheduledAt: { Time: new Date().toISOString() } },
      });
      assert.equal(res.status, 200);
      await start(originator, 'worker-reconcile', { reconcileGraceMs: 500, pollMs: 200 });
      await until(() => originator.requests.length === 1, 5_000);
      assert.equal(originator.requests[0]?.context.messageId, res.body.message_id);
    } finally {
      await lostControl.close(0);
    }
  });
});
