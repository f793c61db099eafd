import { hostname } from 'node:os';
import { systemClock, type Clock } from '../../../core/clock.js';
import { schedulerSchema, type SchedulerSettings } from '../../../core/config/schema.js';
import type { Logger } from '../../../core/logger.js';
import type { Originator } from '../../../core/ports/originator.js';
import type { SecretBox } from '../../platform/crypto/secret-box.js';
import { SafeHttp } from '../../platform/net/safe-http.js';
import type { OutboundHttp } from '../../platform/net/outbound-http.js';
import type { Store } from '../../platform/store/database.js';
import { createTenantsRepository } from '../../model/tenants/tenants-repository.js';
import { AgendaJobs } from './agenda-jobs.js';
import { CallbackDelivery } from './callbacks.js';
import { CampaignScheduler } from './campaign-scheduler.js';
import { DuePoller } from './job-triggers.js';

/**
 * Composition of the campaign scheduler for the `worker` role. On PostgreSQL, Agenda fires a job
 * per due moment and the store poller reconciles lost jobs after a grace period; on PGlite the
 * poller is the trigger (Agenda's backend needs a pg-protocol server, see docs/scheduler.md).
 */
export interface CampaignWorkerOptions {
  readonly store: Store;
  readonly logger: Logger;
  readonly originator: Originator;
  readonly secretBox: SecretBox;
  readonly clock?: Clock;
  readonly workerId?: string;
  /** `agenda` needs store.url (PostgreSQL). Default: agenda when available, else poll. */
  readonly trigger?: 'agenda' | 'poll';
  /** Timings and batch sizes (config `scheduler.*`); defaults from the config schema. */
  readonly settings?: Partial<SchedulerSettings>;
  /** Overrides settings.pollMs / reconcilePollMs (tests). */
  readonly pollMs?: number;
  /** Overrides settings.reconcileGraceMs. */
  readonly reconcileGraceMs?: number;
  /** Overrides settings.leaseMs. */
  readonly leaseMs?: number;
  /** Outbound HTTP for callbacks; default SafeHttp with each tenant's SSRF allowlist. */
  readonly http?: OutboundHttp;
  readonly agendaTable?: string;
}

export interface CampaignWorker {
  readonly scheduler: CampaignScheduler;
  readonly poller: DuePoller;
  readonly delivery: CallbackDelivery;
  readonly agenda?: AgendaJobs;
  stop(graceMs: number): Promise<void>;
}

/** Per-tenant callback settings, cached briefly: every state change of every call reads them. */
function tenantSettings(store: Store, box: SecretBox, clock: Clock): (tenantId: string) => Promise<{ secret?: string; allowlist: readonly string[] }> {
  const tenants = createTenantsRepository(box);
  const cache = new Map<string, { at: number; value: { secret?: string; allowlist: readonly string[] } }>();
  return async (tenantId) => {
    const hit = cache.get(tenantId);
    if (hit && clock.now() - hit.at < 5_000) return hit.value;
    const settings = await tenants.settingsWithSecrets(store.db, tenantId);
    const value = { ...(settings?.webhookSecret ? { secret: settings.webhookSecret } : {}), allowlist: settings?.ssrfAllowlist ?? [] };
    cache.set(tenantId, { at: clock.now(), value });
    return value;
  };
}

export async function startCampaignWorker(options: CampaignWorkerOptions): Promise<CampaignWorker> {
  const clock = options.clock ?? systemClock;
  const settings = schedulerSchema.parse(options.settings ?? {});
  const logger = options.logger.child({ component: 'campaign-scheduler' });
  const trigger = options.trigger ?? (options.store.url ? 'agenda' : 'poll');
  if (trigger === 'agenda' && !options.store.url) throw new Error('the agenda trigger needs PostgreSQL (database.url)');
  const workerId = options.workerId ?? `${hostname()}:${process.pid}`;
  const tenant = tenantSettings(options.store, options.secretBox, clock);
  const http = options.http ?? new SafeHttp({ allowlist: async (tenantId) => (await tenant(tenantId)).allowlist });
  const delivery = new CallbackDelivery({ db: options.store.db, http, clock, logger, pollMs: settings.callbackPollMs, secretFor: async (tenantId) => (await tenant(tenantId)).secret });
  const agenda =
    trigger === 'agenda'
      ? new AgendaJobs({ url: options.store.url!, logger, name: workerId, processEveryMs: settings.agendaProcessEveryMs, concurrency: settings.agendaConcurrency, ...(options.agendaTable ? { tableName: options.agendaTable } : {}) })
      : undefined;
  const scheduler = new CampaignScheduler({
    db: options.store.db,
    originator: options.originator,
    clock,
    logger,
    workerId,
    leaseMs: options.leaseMs ?? settings.leaseMs,
    queueRecheckMs: settings.queueRecheckMs,
    outcomeBatchSize: settings.outcomeBatchSize,
    ...(agenda ? { enqueue: (id: string, at: number) => agenda.enqueue(id, at) } : {}),
    onCallbacksQueued: () => delivery.wake(),
  });
  const poller = new DuePoller({
    scheduler,
    clock,
    logger,
    pollMs: options.pollMs ?? (agenda ? settings.reconcilePollMs : settings.pollMs),
    graceMs: agenda ? (options.reconcileGraceMs ?? settings.reconcileGraceMs) : 0,
    batchSize: settings.claimBatchSize,
    parallelism: settings.claimParallelism,
  });
  scheduler.start();
  if (agenda) {
    // A job is a wake-up: the first one due claims every due message in batches (one commit per
    // batch), concurrent jobs wait for that sweep, then each checks its own message (usually done).
    let sweep: Promise<void> | undefined;
    await agenda.process(async (id) => {
      sweep ??= (async () => {
        // As the store poller's sweep: the next batch once this one's INVITEs are out.
        for (;;) {
          const { decided, dispatched } = await scheduler.claimDueBatch(settings.claimBatchSize);
          if (decided < settings.claimBatchSize) break;
          await dispatched;
        }
      })().finally(() => (sweep = undefined));
      await sweep;
      return scheduler.runMessage(id);
    });
  }
  poller.start();
  delivery.start();
  logger.info({ trigger, workerId }, 'campaign scheduler started');
  return {
    scheduler,
    poller,
    delivery,
    ...(agenda ? { agenda } : {}),
    async stop(graceMs) {
      await poller.stop();
      // No new jobs; the handlers in progress finish (they only claim and start calls).
      await agenda?.stopProcessing();
      // Calls settle with Agenda still connected, so their retries get a job.
      await scheduler.stop(graceMs);
      await agenda?.close();
      await delivery.stop();
    },
  };
}

/** What the control role's SendMessage uses to make a job fire at the due time (scheduling-only Agenda). */
export async function campaignEnqueuer(store: Store, logger: Logger, name = `${hostname()}:${process.pid}:control`): Promise<AgendaJobs | undefined> {
  if (!store.url) return undefined;
  const jobs = new AgendaJobs({ url: store.url, logger, name });
  await jobs.connect();
  return jobs;
}
