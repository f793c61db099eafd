import assert from 'node:assert/strict';
import { FakeClock } from '../../core/clock.js';
import { createLogger } from '../../core/logger.js';
import type { OriginateResult, Originator } from '../../core/ports/originator.js';
import { acceptMessage } from '../../control-api/features/campaigns/accept-message.js';
import { AttemptOutcomes } from '../../control-api/features/campaigns/attempt-outcomes.js';
import { CallbackDelivery } from '../../control-api/features/campaigns/callbacks.js';
import { CampaignScheduler } from '../../control-api/features/campaigns/campaign-scheduler.js';
import { DuePoller } from '../../control-api/features/campaigns/job-triggers.js';
import { answeredCall, CallbackReceiver, ScriptedOriginator, seedBusinessHours, seedCampaign, seedTenant, type SeededTenant } from '../helpers/campaign-support.js';
import { campaignSchema, type CampaignInput } from '../../control-api/model/domain/campaign.js';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import { SafeHttp } from '../../control-api/platform/net/safe-http.js';
import { verifySignature } from '../../control-api/platform/webhooks/signing.js';
import { forEachStore } from '../helpers/stores.js';

const box = createSecretBox(Buffer.alloc(32, 7));
const logger = createLogger({ level: 'silent' });
const secret = 'acme-callback-signing-secret-0123';
const minutes = 60_000;
// Monday 2026-03-02 10:00 in Asia/Kolkata (the tenant's dashboard timezone).
const monday10 = Date.parse('2026-03-02T04:30:00Z');
const busy: OriginateResult = { outcome: 'busy', sipStatus: 486 };
const noAnswer: OriginateResult = { outcome: 'no-answer', sipStatus: 487 };
const failed503: OriginateResult = { outcome: 'failed', sipStatus: 503, reason: 'Service Unavailable' };

/** Polls `condition` until it holds, failing after `ms`. */
async function waitFor(condition: () => Promise<boolean>, ms = 5_000): Promise<void> {
  for (const until = Date.now() + ms; !(await condition()); await new Promise((r) => setTimeout(r, 10))) {
    if (Date.now() > until) throw new Error('condition not met in time');
  }
}

forEachStore('campaign scheduler', (store) => {
  const db = () => store().db;
  let tenant: SeededTenant;
  const receiver = new CallbackReceiver();
  let clock: FakeClock;
  let originator: ScriptedOriginator;
  let scheduler: CampaignScheduler;
  let delivery: CallbackDelivery;
  let campaignSeq = 0;

  const newScheduler = (workerId: string, leaseMs = 60_000) =>
    new CampaignScheduler({ db: db(), originator, clock, logger, workerId, leaseMs });
  const campaign = (extra: Partial<CampaignInput> = {}) => seedCampaign(db(), box, tenant.tenantId, `Campaign ${++campaignSeq}`, extra);
  const send = async (campaignId: string, at: number, extra: { bypass?: boolean; state?: Record<string, unknown> } = {}) =>
    (
      await acceptMessage(
        db(),
        tenant.tenantId,
        {
          campaignId,
          to: '+919876543210',
          variables: { name: 'Asha' },
          callback: { url: receiver.url, state: extra.state ?? { lead: 'L-1' } },
          scheduledAt: at,
          bypassCallingWindow: extra.bypass ?? false,
        },
        { now: clock.now() },
      )
    ).messageId;
  /** Runs the message and waits until the call it started (if any) is settled in the store. */
  const run = async (id: string, s = scheduler) => {
    const result = await s.runMessage(id);
    await s.settled();
    return result;
  };
  const flush = async () => {
    await delivery.deliverDue();
  };
  const message = (id: string) => db().selectFrom('campaign_messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const attempts = (id: string) => db().selectFrom('campaign_attempts').select(['attempt_no', 'status', 'sip_status', 'reason']).where('message_id', '=', id).orderBy('attempt_no').execute();

  before(async () => {
    await receiver.start();
    tenant = await seedTenant(db(), box, { clientId: 'acme', timezone: 'Asia/Kolkata', webhookSecret: secret, allowLoopback: true });
  });
  after(async () => receiver.stop());
  beforeEach(() => {
    clock = new FakeClock(monday10);
    originator = new ScriptedOriginator();
    scheduler = newScheduler('worker-a');
    delivery = new CallbackDelivery({ db: db(), http: new SafeHttp({ allowlist: () => ['127.0.0.1'] }), clock, logger, secretFor: async () => secret, backoffMs: () => 30_000 });
  });

  describe('an answered call', () => {
    it('dials with the campaign settings and reports scheduled, ringing, answered, completed with State echoed and signed', async () => {
      const id = await send(await campaign({ ringDurationSeconds: 20, startLogic: { mode: 'waitSeconds', seconds: 3 } }), monday10, { state: { lead: 'L-9', tags: ['vip'] } });
      const call = answeredCall();
      originator.queue((request) => {
        request.onRinging?.();
        setTimeout(() => call.hangUp({ durationMs: 65_000 }), 5);
        return call.result;
      });
      assert.equal(await run(id), 'dialing');
      const [request] = originator.requests;
      assert.equal(request?.to, '+919876543210');
      assert.equal(request?.ringTimeoutMs, 20_000);
      assert.deepEqual(request?.startLogic, { mode: 'waitSeconds', seconds: 3 });
      assert.deepEqual(request?.context, { tenantId: tenant.tenantId, campaignId: request?.context.campaignId, messageId: id, attempt: 1, recipeId: request?.context.recipeId, variables: { name: 'Asha' } });
      assert.match(request?.from.e164 ?? '', /^\+9144/);
      assert.equal((await message(id)).status, 'completed');
      await flush();
      assert.deepEqual(receiver.statuses(id), ['scheduled#0', 'ringing#1', 'answered#1', 'completed#1']);
      for (const delivered of receiver.received.filter((r) => r.body.message_id === id)) {
        assert.deepEqual(delivered.body.state, { lead: 'L-9', tags: ['vip'] });
        assert.deepEqual(verifySignature(secret, String(delivered.headers['x-vap-signature']), delivered.raw, { nowMs: clock.now() }), { ok: true });
      }
      const completed = receiver.received.find((r) => r.body.message_id === id && r.body.status === 'completed');
      assert.equal(completed?.body.final, true);
      assert.equal(completed?.body.duration_ms, 65_000);
    });
  });

  describe('retries', () => {
    it('retries busy and no-answer after the interval, then completes', async () => {
      const id = await send(await campaign({ maxRetries: 2, retryIntervalMinutes: 5 }), monday10);
      const call = answeredCall();
      originator.queue(() => busy, () => noAnswer, () => {
        setTimeout(() => call.hangUp(), 1);
        return call.result;
      });
      await run(id);
      assert.equal((await message(id)).next_attempt_at?.getTime(), monday10 + 5 * minutes);
      clock.advance(4 * minutes);
      assert.equal(await run(id), 'not-due');
      clock.advance(1 * minutes);
      await run(id);
      clock.advance(5 * minutes);
      await run(id);
      assert.equal(originator.requests.length, 3);
      assert.deepEqual((await attempts(id)).map((a) => [a.attempt_no, a.status, a.sip_status]), [[1, 'busy', 486], [2, 'no-answer', 487], [3, 'completed', 200]]);
      await flush();
      assert.deepEqual(receiver.statuses(id), ['scheduled#0', 'busy#1', 'rescheduled#2', 'no-answer#2', 'rescheduled#3', 'answered#3', 'completed#3']);
    });

    it('stops after max retries with the last outcome as the final state', async () => {
      const id = await send(await campaign({ maxRetries: 1, retryIntervalMinutes: 1 }), monday10);
      originator.otherwise(() => failed503);
      await run(id);
      clock.advance(1 * minutes);
      await run(id);
      clock.advance(10 * minutes);
      assert.equal(await run(id), 'not-scheduled');
      assert.equal(originator.requests.length, 2);
      assert.equal((await message(id)).status, 'failed');
      await flush();
      const last = receiver.received.filter((r) => r.body.message_id === id).at(-1)?.body;
      assert.equal(last?.status, 'failed');
      assert.equal(last?.final, true);
      assert.equal(last?.sip_status, 503);
    });

    it('does not retry an outcome missing from the retry scenarios', async () => {
      const id = await send(await campaign({ maxRetries: 3, retryScenarios: ['busy'] }), monday10);
      originator.queue(() => noAnswer);
      await run(id);
      assert.equal((await message(id)).status, 'no-answer');
      assert.equal(originator.requests.length, 1);
    });
  });

  describe('working window and DND', () => {
    const window = { enabled: true, mode: 'custom' as const, start: '09:00', end: '18:00' };

    it('reschedules a call due outside the window to the next opening (reschedule behaviour)', async () => {
      const evening = Date.parse('2026-03-02T14:30:00Z'); // 20:00 IST
      const id = await send(await campaign({ workingWindow: window }), evening);
      clock.setTime(evening);
      assert.equal(await run(id), 'rescheduled');
      const nextMorning = Date.parse('2026-03-03T03:30:00Z'); // 09:00 IST
      assert.equal((await message(id)).next_attempt_at?.getTime(), nextMorning);
      assert.equal(originator.requests.length, 0);
      clock.setTime(nextMorning);
      originator.queue(() => busy);
      assert.equal(await run(id), 'dialing');
      await flush();
      const rescheduled = receiver.received.find((r) => r.body.message_id === id && r.body.status === 'rescheduled');
      assert.equal(rescheduled?.body.next_attempt_at, '2026-03-03T03:30:00.000Z');
    });

    it('discards a call due in DND hours when the campaign says discard', async () => {
      const night = Date.parse('2026-03-02T17:30:00Z'); // 23:00 IST
      const id = await send(await campaign({ workingWindow: window, dndBehaviour: 'discard' }), night);
      clock.setTime(night);
      assert.equal(await run(id), 'discarded');
      assert.equal((await message(id)).status, 'discarded');
      assert.equal(originator.requests.length, 0);
      await flush();
      assert.deepEqual(receiver.statuses(id), ['scheduled#0', 'discarded#0']);
    });

    it('rings at the exact time with BypassCallingWindow, and holds the retry to the window', async () => {
      const night = Date.parse('2026-03-02T17:30:00Z'); // 23:00 IST
      const id = await send(await campaign({ workingWindow: window, maxRetries: 1, retryIntervalMinutes: 10 }), night, { bypass: true });
      clock.setTime(night);
      originator.queue(() => busy);
      assert.equal(await run(id), 'dialing');
      clock.advance(10 * minutes);
      assert.equal(await run(id), 'rescheduled');
      assert.equal((await message(id)).next_attempt_at?.toISOString(), '2026-03-03T03:30:00.000Z');
      assert.equal(originator.requests.length, 1);
    });

    it('follows a business-hours profile in its own timezone', async () => {
      await seedBusinessHours(db(), box, tenant.tenantId, { name: 'Berlin office', timezone: 'Europe/Berlin', hours: [{ day: 'tuesday', start: '08:00', end: '12:00' }], closedDates: [] });
      const id = await send(await campaign({ workingWindow: { enabled: true, mode: 'businessHours', profile: 'Berlin office' } }), monday10);
      assert.equal(await run(id), 'rescheduled');
      assert.equal((await message(id)).next_attempt_at?.toISOString(), '2026-03-03T07:00:00.000Z');
    });
  });

  describe('exactly once', () => {
    it('places one call when two workers and a duplicate job run the same message at once', async () => {
      const id = await send(await campaign(), monday10);
      const call = answeredCall();
      originator.otherwise(() => call.result);
      const other = newScheduler('worker-b');
      const results = await Promise.all([scheduler.runMessage(id), other.runMessage(id), scheduler.runMessage(id)]);
      assert.equal(results.filter((r) => r === 'dialing').length, 1, results.join());
      // The answered call's own bookkeeping briefly holds the row ('locked' then); once it is
      // recorded, another look finds the message no longer scheduled.
      for (let i = 0; i < 200 && (await attempts(id))[0]?.status !== 'answered'; i++) await new Promise((r) => setTimeout(r, 5));
      assert.equal(await other.runMessage(id), 'not-scheduled');
      call.hangUp();
      await Promise.all([scheduler.settled(), other.settled()]);
      assert.equal(originator.requests.length, 1);
      assert.deepEqual((await attempts(id)).map((a) => a.status), ['completed']);
    });

    it('claims a burst of due messages in batches on two workers, each exactly once', async () => {
      const campaignId = await campaign();
      const ids = await Promise.all(Array.from({ length: 45 }, () => send(campaignId, monday10)));
      originator.otherwise(() => busy);
      const other = newScheduler('worker-b');
      const sweep = async (s: CampaignScheduler) => {
        while ((await s.runDueBatch(10)) > 0);
      };
      await Promise.all([sweep(scheduler), sweep(other)]);
      await Promise.all([scheduler.settled(), other.settled()]);
      const dialed = originator.requests.map((r) => r.context.messageId).filter((id) => ids.includes(id));
      assert.equal(dialed.length, 45);
      assert.equal(new Set(dialed).size, 45);
    });

    it('settles a group of unanswered outcomes at once with the per-attempt effect of settling them one by one', async () => {
      const campaignId = await campaign({ maxRetries: 1, retryIntervalMinutes: 5, retryScenarios: ['busy'] });
      const ids = [];
      for (let i = 0; i < 4; i++) ids.push(await send(campaignId, monday10));
      const [retried, final, twice, settledAlready] = ids as [string, string, string, string];
      // The live calls hang until the end of the test; their late reports must change nothing.
      let release: (r: OriginateResult) => void = () => undefined;
      const late = new Promise<OriginateResult>((r) => (release = r));
      originator.otherwise(() => late);
      while ((await scheduler.runDueBatch(10)) > 0);
      assert.equal(originator.requests.length, 4);
      await db().updateTable('campaign_attempts').set({ status: 'failed', reason: 'settled before' }).where('message_id', '=', settledAlready).execute();
      const enqueued: string[] = [];
      const outcomes = new AttemptOutcomes({ db: db(), clock, onCallbacksQueued: () => undefined, enqueue: async (id) => void enqueued.push(id) });
      const spec = campaignSchema.parse((await db().selectFrom('campaigns').select('spec').where('id', '=', campaignId).executeTakeFirstOrThrow()).spec);
      const row = async (id: string) => message(id);
      await outcomes.finishUnansweredMany([
        { message: await row(retried), attemptNo: 1, spec, outcome: 'busy', sipStatus: 486 },
        { message: await row(final), attemptNo: 1, spec, outcome: 'no-answer', sipStatus: 480, reason: 'Temporarily Unavailable' },
        { message: await row(twice), attemptNo: 1, spec, outcome: 'busy', sipStatus: 486 },
        { message: await row(twice), attemptNo: 1, spec, outcome: 'failed', sipStatus: 503 },
        { message: await row(settledAlready), attemptNo: 1, spec, outcome: 'busy', sipStatus: 486 },
      ]);
      assert.deepEqual(
        await Promise.all(ids.map(async (id) => { const m = await message(id); return [m.status, m.next_attempt_at?.getTime() ?? null, m.wait_reason]; })),
        [['scheduled', monday10 + 5 * minutes, 'retry'], ['no-answer', monday10, 'initial'], ['scheduled', monday10 + 5 * minutes, 'retry'], ['calling', monday10, 'initial']],
      );
      assert.deepEqual((await attempts(final)).map((a) => [a.status, a.sip_status, a.reason]), [['no-answer', 480, 'Temporarily Unavailable']]);
      assert.deepEqual((await attempts(twice)).map((a) => [a.status, a.sip_status]), [['busy', 486]], 'the first report of an attempt wins');
      assert.deepEqual(enqueued.sort(), [retried, twice].sort());
      release(busy);
      await scheduler.settled();
      assert.equal((await message(final)).status, 'no-answer', 'a late report changes nothing');
      await flush();
      assert.deepEqual(receiver.statuses(retried), ['scheduled#0', 'busy#1', 'rescheduled#2']);
      assert.deepEqual(receiver.statuses(final), ['scheduled#0', 'no-answer#1']);
      assert.deepEqual(receiver.statuses(twice), ['scheduled#0', 'busy#1', 'rescheduled#2']);
      assert.deepEqual(receiver.statuses(settledAlready), ['scheduled#0']);
      assert.deepEqual(receiver.received.filter((r) => r.body.message_id === retried).map((r) => r.body.sequence).sort(), [1, 2, 3]);
    });

    it('settles the rest of a group of outcomes when the database refuses one of them', async () => {
      const campaignId = await campaign({ maxRetries: 0 });
      const ids = [];
      for (let i = 0; i < 6; i++) ids.push(await send(campaignId, monday10));
      let release: () => void = () => undefined;
      const gate = new Promise<void>((r) => (release = r));
      // All answer at the same moment; the last reason holds a NUL, which a text column refuses.
      originator.queue(...Array.from({ length: 5 }, () => async () => (await gate, busy)), async () => (await gate, { outcome: 'failed' as const, sipStatus: 500, reason: 'bad\u0000reason' }));
      while ((await scheduler.runDueBatch(10)) > 0);
      release();
      await scheduler.settled();
      const byId = new Map(originator.requests.map((r, i) => [r.context.messageId, i] as const));
      for (const id of ids) {
        const [attempt] = await attempts(id);
        if (byId.get(id) === 5) assert.equal(attempt?.status, 'dialing', 'the refused one is left to its lease');
        else assert.deepEqual([attempt?.status, (await message(id)).status], ['busy', 'busy']);
      }
    });

    it('settles an attempt whose worker died after dialing as failed (worker-lost) and never places it again, retries or not', async () => {
      const id = await send(await campaign({ maxRetries: 1, retryIntervalMinutes: 1, retryScenarios: ['failed'] }), monday10);
      originator.queue(() => new Promise<OriginateResult>(() => undefined)); // the worker dies while it rings
      const crashed = newScheduler('worker-crashed', 30_000);
      assert.equal(await crashed.runMessage(id), 'dialing');
      await waitFor(async () => (await attempts(id))[0]?.status === 'dialing');
      const survivor = newScheduler('worker-b', 30_000);
      assert.equal(await survivor.recoverExpired(), 0, 'a live lease is left alone');
      clock.advance(31_000);
      assert.equal(await survivor.recoverExpired(), 1);
      assert.deepEqual((await attempts(id)).map((a) => [a.attempt_no, a.status, a.reason]), [[1, 'failed', 'worker-lost']]);
      assert.equal((await message(id)).status, 'failed');
      clock.advance(1 * minutes);
      assert.equal(await survivor.runMessage(id), 'not-scheduled');
      assert.equal(originator.requests.length, 1, 'the callee may have rung: no second call');
      await flush();
      assert.deepEqual(receiver.statuses(id), ['scheduled#0', 'failed#1']);
      assert.equal(receiver.received.find((r) => r.body.message_id === id && r.body.status === 'failed')?.body.final, true);
      const [call] = await db().selectFrom('calls').select(['attempt', 'outcome', 'end_reason']).where('message_id', '=', id).execute();
      assert.deepEqual(call, { attempt: 1, outcome: 'failed', end_reason: 'failed' }, 'the lost attempt is a call record too');
    });

    it('hands an attempt claimed but never dialled back to the queue when its worker dies, and it is placed once', async () => {
      const id = await send(await campaign({ maxRetries: 0 }), monday10);
      // The worker is killed after the claim, before the INVITE (while it looks up the route).
      const stuck: Originator = { originate: () => new Promise<OriginateResult>(() => undefined) };
      const crashed = new CampaignScheduler({ db: db(), originator: stuck, clock, logger, workerId: 'worker-crashed', leaseMs: 30_000 });
      assert.equal(await crashed.runMessage(id), 'dialing');
      assert.deepEqual((await attempts(id)).map((a) => [a.attempt_no, a.status]), [[1, 'claimed']]);
      clock.advance(31_000);
      const survivor = newScheduler('worker-b', 30_000);
      assert.equal(await survivor.recoverExpired(), 1);
      assert.deepEqual(await attempts(id), [], 'the attempt number is free again');
      assert.deepEqual([(await message(id)).status, (await message(id)).attempts_made], ['scheduled', 0]);
      originator.queue(() => busy);
      assert.equal(await run(id, survivor), 'dialing');
      assert.deepEqual((await attempts(id)).map((a) => [a.attempt_no, a.status]), [[1, 'busy']]);
      assert.deepEqual(originator.requests.map((r) => r.context.attempt), [1]);
      await flush();
      assert.deepEqual(receiver.statuses(id), ['scheduled#0', 'busy#1']);
    });

    it('a worker whose claim was handed back while it stalled sends no INVITE for it', async () => {
      const id = await send(await campaign({ maxRetries: 0 }), monday10);
      let resume: () => void = () => undefined;
      const stalled = new Promise<void>((r) => (resume = r));
      let invitedByStalled = false;
      const slow: Originator = {
        async originate(request) {
          await stalled; // e.g. cut off from the database past its lease
          try {
            await request.beforeInvite?.();
          } catch (error) {
            return { outcome: 'failed', reason: (error as Error).message };
          }
          invitedByStalled = true;
          return busy;
        },
      };
      const stalledWorker = new CampaignScheduler({ db: db(), originator: slow, clock, logger, workerId: 'worker-stalled', leaseMs: 30_000 });
      assert.equal(await stalledWorker.runMessage(id), 'dialing');
      clock.advance(31_000);
      const survivor = newScheduler('worker-b', 30_000);
      assert.equal(await survivor.recoverExpired(), 1);
      originator.queue(() => busy);
      assert.equal(await run(id, survivor), 'dialing');
      resume();
      await stalledWorker.settled();
      assert.equal(invitedByStalled, false);
      assert.deepEqual((await attempts(id)).map((a) => [a.attempt_no, a.status]), [[1, 'busy']]);
      assert.equal((await message(id)).status, 'busy');
      assert.equal(originator.requests.length, 1);
    });

    it('records an answered call whose worker died as completed (worker-lost)', async () => {
      const id = await send(await campaign({ maxRetries: 2 }), monday10);
      const call = answeredCall();
      originator.queue(() => call.result); // never hung up: the worker is gone
      const crashed = newScheduler('worker-crashed', 30_000);
      await crashed.runMessage(id);
      await waitFor(async () => (await attempts(id))[0]?.status === 'answered');
      clock.advance(31_000);
      await newScheduler('worker-b').recoverExpired();
      assert.equal((await message(id)).status, 'completed');
      assert.deepEqual((await attempts(id)).map((a) => [a.status, a.reason]), [['completed', 'worker-lost']]);
    });
  });

  describe('concurrency limits', () => {
    it('queues calls above the campaign limit and places them when a line frees up', async () => {
      const campaignId = await campaign({ maxConcurrentCalls: 1 });
      const first = await send(campaignId, monday10);
      const second = await send(campaignId, monday10);
      const call = answeredCall();
      originator.queue(() => call.result, () => busy);
      assert.equal(await scheduler.runMessage(first), 'dialing');
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(await scheduler.runMessage(second), 'queued');
      assert.equal((await message(second)).status, 'scheduled');
      call.hangUp();
      await scheduler.settled();
      clock.advance(1_000);
      assert.equal(await run(second), 'dialing');
      assert.equal(originator.requests.length, 2);
    });
  });

  describe('callback delivery', () => {
    it('retries a failed delivery with backoff, without holding up the call', async () => {
      const id = await send(await campaign(), monday10);
      originator.queue(() => busy);
      await run(id);
      assert.equal((await message(id)).status, 'busy', 'the call settled before any callback was delivered');
      // Scope the outbox to this message: deliver what earlier tests left behind first.
      await db().updateTable('campaign_callbacks').set({ next_try_at: new Date(clock.now() + 1) }).where('message_id', '=', id).execute();
      await flush();
      clock.advance(1);
      receiver.failNext(2);
      await flush();
      const pending = await db().selectFrom('campaign_callbacks').select(['tries', 'last_status', 'delivered_at']).where('message_id', '=', id).orderBy('id').execute();
      assert.deepEqual(pending.map((p) => [p.tries, p.last_status, p.delivered_at]), [[1, 503, null], [1, 503, null]]);
      clock.advance(30_000);
      await flush();
      assert.deepEqual(receiver.statuses(id), ['scheduled#0', 'busy#1']);
      const done = await db().selectFrom('campaign_callbacks').select('tries').where('message_id', '=', id).execute();
      assert.deepEqual(done.map((d) => d.tries), [2, 2]);
    });
  });

  describe('store poller', () => {
    it('runs every due message and leaves future ones alone', async () => {
      const campaignId = await campaign();
      const due = await send(campaignId, monday10 - 1_000);
      const later = await send(campaignId, monday10 + 10 * minutes);
      originator.otherwise(() => busy);
      const poller = new DuePoller({ scheduler, clock, logger });
      const pendingBefore = await db().selectFrom('campaign_messages').select('id').where('status', '=', 'scheduled').where('next_attempt_at', '<=', new Date(clock.now())).execute();
      assert.ok(pendingBefore.some((p) => p.id === due));
      await poller.runOnce();
      await scheduler.settled();
      assert.equal((await message(due)).status, 'busy');
      assert.equal((await message(later)).status, 'scheduled');
    });
  });
});
