import type { Originator } from '../../core/ports/originator.js';
import { systemClock } from '../../core/clock.js';
import { watchCampaignBacklog } from '../../control-api/features/campaigns/campaign-backlog.js';
import { startCampaignWorker } from '../../control-api/features/campaigns/campaign-worker.js';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import { createPlatformAnalysisWorker } from '../../control-api/features/insights/analysis-runtime.js';
import { processOriginator } from '../originator-registry.js';
import type { RoleStarter } from './role.js';

/**
 * Used when a build has no originator at all: every attempt ends `failed` with 503, so messages
 * follow the campaign's retry policy instead of silently waiting.
 */
export const gatewayNotBuiltOriginator: Originator = {
  originate: async () => ({ outcome: 'failed', sipStatus: 503, reason: 'the SIP gateway is not available in this build' }),
};

/** The `worker` role: the campaign scheduler (Agenda on PostgreSQL, the store poller on PGlite), its callbacks, and post-call analysis. */
export const createWorkerRole =
  (originator: Originator | undefined): RoleStarter =>
  async (ctx) => {
    const logger = ctx.logger.child({ role: 'worker' });
    if (!originator) logger.warn('no SIP originator in this build: campaign calls will fail with 503 and follow their retry policy');
    const worker = await startCampaignWorker({
      store: ctx.store,
      logger,
      originator: originator ?? gatewayNotBuiltOriginator,
      secretBox: createSecretBox(ctx.secrets.secretKey),
      settings: ctx.config.scheduler,
    });
    // Post-call analysis (insights + analysis_success webhook) from the durable analysis_jobs queue.
    const analysis = createPlatformAnalysisWorker({ db: ctx.store.db, logger, secretKey: ctx.secrets.secretKey });
    analysis.start();
    // Due, not yet dialled messages on /metrics (read from the store at scrape time).
    const unwatch = watchCampaignBacklog({ db: ctx.store.db, clock: systemClock });
    // Drain: place no new call and wait for those placed (the gateway, when it runs here, ends
    // what is still up at the drain timeout with its own BYE, so the worker waits a grace longer).
    let drained: Promise<void> | undefined;
    return {
      name: 'worker',
      drain: (timeoutMs) => (drained ??= worker.stop(timeoutMs + ctx.config.shutdownGraceMs)),
      stop: async (graceMs) => {
        unwatch();
        await Promise.all([drained ?? worker.stop(graceMs), analysis.stop()]);
      },
    };
  };

/** Dials through the gateway role's SIP Originator when that role runs in the same process. */
export const startWorkerRole: RoleStarter = createWorkerRole(processOriginator);
