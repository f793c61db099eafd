import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createLogger } from '../../core/logger.js';
import type { OriginateResult } from '../../core/ports/originator.js';
import { campaignEnqueuer, startCampaignWorker } from '../../control-api/features/campaigns/campaign-worker.js';
import type { AgendaJobs } from '../../control-api/features/campaigns/agenda-jobs.js';
import { ScriptedOriginator, seedCampaign, seedTenant } from '../helpers/campaign-support.js';
import { acceptMessage } from '../../control-api/features/campaigns/accept-message.js';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import type { Store } from '../../control-api/platform/store/database.js';
import { freshStore } from '../helpers/stores.js';

const box = createSecretBox(Buffer.alloc(32, 7));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(condition: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

/**
 * The worker's graceful stop with the Agenda trigger (PostgreSQL only): calls still in progress
 * settle with Agenda connected (their retries get a job), Agenda's own runs finish before its pool
 * closes (no run left locked, no "no lockedAt date" error later), and nothing reconnects afterwards.
 */
describe('campaign worker stop with the Agenda trigger', function () {
  this.timeout(30_000);
  let store: Store;
  let tenantId: string;
  let campaignId: string;
  let jobs: AgendaJobs | undefined;
  // Everything the worker logs at warn or above: a clean stop logs nothing there.
  const lines: string[] = [];
  const logger = createLogger({ level: 'warn' }, { write: (line: string) => void lines.push(line) });

  before(async () => {
    store = await freshStore('postgres');
    const tenant = await seedTenant(store.db, box, { clientId: 'acme' });
    tenantId = tenant.tenantId;
    // Busy is retried a minute later, so a call ending during stop() needs a new job.
    campaignId = await seedCampaign(store.db, box, tenantId, 'Stop campaign', { maxRetries: 1, retryScenarios: ['busy'], retryIntervalMinutes: 1 });
    jobs = await campaignEnqueuer(store, createLogger({ level: 'silent' }), 'test-control');
  });
  after(async () => {
    await jobs?.close();
    await store?.close();
  });

  const jobRows = async (ids: readonly string[]) =>
    (await sql<{ message_id: string; locked: boolean; next_run_at: Date | null }>`SELECT data->>'messageId' AS message_id, locked_at IS NOT NULL AS locked, next_run_at FROM agenda_jobs WHERE data->>'messageId' IN (${sql.join(ids)})`.execute(store.db)).rows;

  it('lets calls in progress settle with Agenda connected, finishes its runs, and leaves nothing behind', async () => {
    const release: (() => void)[] = [];
    let released = false;
    const busy: OriginateResult = { outcome: 'busy', sipStatus: 486 };
    // Calls hang until released, so stop() begins with calls and Agenda runs in progress. A run that
    // began before stop() may place its call after the release (both cores busy): that one ends at
    // once, as a real call ends by its ring timeout, instead of holding stop() for its whole grace.
    const originator = new ScriptedOriginator().otherwise(() => (released ? Promise.resolve(busy) : new Promise<OriginateResult>((r) => release.push(() => r(busy)))));
    const worker = await startCampaignWorker({ store, logger, originator, secretBox: box, workerId: 'worker-stop', trigger: 'agenda', reconcileGraceMs: 600_000, pollMs: 10_000 });
    const due = Date.now() + 800;
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const { messageId } = await acceptMessage(store.db, tenantId, { campaignId, to: '+14155550100', variables: {}, scheduledAt: due, bypassCallingWindow: true }, { now: Date.now() });
      ids.push(messageId);
      await jobs!.enqueue(messageId, due);
    }
    await until(() => originator.requests.length >= 1, 10_000);
    const stopped = worker.stop(10_000);
    await sleep(300);
    const placed = originator.requests.length;
    released = true;
    for (const r of release.splice(0)) r();
    await stopped;
    assert.ok(placed >= 1);
    assert.deepEqual(lines, [], 'a clean stop logs no warning or error');

    // Each placed call ended busy during stop() and got its retry job (a minute later).
    const dialed = new Set(originator.requests.map((r) => r.context.messageId));
    const rows = await jobRows(ids);
    const retries = rows.filter((r) => dialed.has(r.message_id) && r.next_run_at && r.next_run_at.getTime() > Date.now() + 30_000);
    assert.equal(retries.length, dialed.size, 'every call that ended during stop() has its retry job');
    // No run of the stopped worker left its job locked (runs that finished were removed; the rest unlocked).
    assert.deepEqual(rows.filter((r) => r.locked), []);

    // After stop, nothing reconnects: scheduling through the closed instance fails at once and logs nothing.
    await assert.rejects(worker.agenda!.enqueue(ids[0]!, Date.now() + 60_000), /closed/);
    await sleep(500);
    assert.deepEqual(lines, []);
  });
});
