import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { systemClock, type Clock, type TimerHandle } from '../../../core/clock.js';
import type { Logger } from '../../../core/logger.js';
import { PollingLoop, type RoundResult } from '../../../core/polling-loop.js';
import { counter, histogram } from '../../../core/metrics.js';
import type { OutboundHttp } from '../../platform/net/outbound-http.js';
import type { Database } from '../../platform/store/schema.js';
import { claimJobs, renewLeases, type AnalysisJobRow } from './analysis-jobs.js';
import { runDeliver, runExtract, type StepDeps, type StepResult, type TenantWebhook } from './analysis-steps.js';
import type { InsightExtractor } from './insight-extractor.js';

/**
 * Runs post-call jobs from the `analysis_jobs` table: claims due jobs up to `concurrency`,
 * keeps their leases alive while they run, and polls (or is nudged) for more. Any number of
 * workers in any number of processes may run against one database.
 */
export interface AnalysisWorkerOptions {
  readonly db: Kysely<Database>;
  readonly logger: Logger;
  readonly extractor: InsightExtractor;
  /** SSRF-safe outbound HTTP for the webhook (control-api/platform/net/safe-http.ts). */
  readonly http: OutboundHttp;
  /** The tenant's `settings.webhookUrl` and, in clear, its signing secret. */
  readonly tenantWebhook: (tenantId: string) => Promise<TenantWebhook | undefined>;
  readonly clock?: Clock;
  readonly workerId?: string;
  /** Jobs run at once by this worker. Default 8 (extraction waits on the model, not the CPU). */
  readonly concurrency?: number;
  /** Poll interval when idle. Default 500 ms. */
  readonly pollMs?: number;
  /** A crashed worker's job is taken again this long after its last renewal. Default 60 s. */
  readonly leaseMs?: number;
  /** Default 5. Attempts also stop at the call's analysis window (5 minutes after hang-up). */
  readonly extractMaxAttempts?: number;
  /** Default 2 s doubling per attempt with jitter, capped at 60 s. */
  readonly extractBackoffMs?: (attempt: number) => number;
  /** Per attempt, covering the provider's own retries. Default 120 s. */
  readonly extractTimeoutMs?: number;
  /** Default 8 (as campaign callbacks). */
  readonly deliverMaxAttempts?: number;
  /** Default 15 s doubling per attempt with jitter, capped at 1 hour (as campaign callbacks). */
  readonly deliverBackoffMs?: (attempt: number) => number;
  readonly webhookTimeoutMs?: number;
}

const jitter = (): number => 0.8 + Math.random() * 0.4;
export const defaultExtractBackoff = (attempt: number): number => Math.min(60_000, 2_000 * 2 ** (attempt - 1)) * jitter();
export const defaultDeliverBackoff = (attempt: number): number => Math.min(3_600_000, 15_000 * 2 ** (attempt - 1)) * jitter();

const jobsTotal = counter('analysis_jobs_total', 'Post-call analysis job runs by kind and result', ['kind', 'result']);
const analysisLatency = histogram('analysis_latency_seconds', 'Hang-up to completed analysis', [], [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600]);

export class AnalysisWorker {
  readonly workerId: string;
  private readonly clock: Clock;
  private readonly inflight = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  private stopped = true;
  private readonly loop: PollingLoop;
  private heartbeat: TimerHandle | undefined;

  constructor(private readonly options: AnalysisWorkerOptions) {
    this.clock = options.clock ?? systemClock;
    this.workerId = options.workerId ?? `analysis-${randomUUID()}`;
    this.loop = new PollingLoop({ name: 'analysis worker', clock: this.clock, logger: options.logger, intervalMs: options.pollMs ?? 500, round: () => this.claimRound() });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop.start();
    this.scheduleHeartbeat();
  }

  /** Stops claiming, cancels running jobs (their leases lapse and another worker retakes them) and waits. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.heartbeat) this.clock.clearTimeout(this.heartbeat);
    this.abort.abort();
    await this.loop.stop();
    await Promise.allSettled(this.inflight.values());
  }

  /** New work was queued: look now rather than at the next poll. */
  nudge(): void {
    this.loop.wake();
  }

  /** Claims what is due and runs it to the end; returns how many jobs ran (for tests and tools). */
  async drainOnce(): Promise<number> {
    const jobs = await claimJobs(this.options.db, this.workerId, this.options.concurrency ?? 8, new Date(this.clock.now()), this.leaseMs());
    await Promise.all(jobs.map((job) => this.process(job)));
    return jobs.length;
  }

  private leaseMs(): number {
    return this.options.leaseMs ?? 60_000;
  }

  /** Claims up to the free slots; a full claim means more may be waiting (the loop runs again at once). */
  private async claimRound(): Promise<RoundResult> {
    const free = (this.options.concurrency ?? 8) - this.inflight.size;
    if (free <= 0) return 'idle';
    const jobs = await claimJobs(this.options.db, this.workerId, free, new Date(this.clock.now()), this.leaseMs());
    for (const job of jobs) {
      const running = this.process(job).finally(() => {
        this.inflight.delete(job.id);
        // A slot is free: look for more work now rather than at the next poll.
        this.loop.wake();
      });
      this.inflight.set(job.id, running);
    }
    return jobs.length === free ? 'more' : 'idle';
  }

  private scheduleHeartbeat(): void {
    const every = Math.max(50, Math.floor(this.leaseMs() / 3));
    this.heartbeat = this.clock.setTimeout(() => {
      const ids = [...this.inflight.keys()];
      renewLeases(this.options.db, this.workerId, ids, new Date(this.clock.now() + this.leaseMs()))
        .catch((error: unknown) => this.options.logger.warn({ err: error }, 'analysis lease renewal failed'))
        .finally(() => {
          if (!this.stopped) this.scheduleHeartbeat();
        });
    }, every);
  }

  private deps(): StepDeps {
    const o = this.options;
    return {
      db: o.db,
      workerId: this.workerId,
      now: () => this.clock.now(),
      extractor: o.extractor,
      http: o.http,
      tenantWebhook: o.tenantWebhook,
      extractMaxAttempts: o.extractMaxAttempts ?? 5,
      extractBackoffMs: o.extractBackoffMs ?? defaultExtractBackoff,
      extractTimeoutMs: o.extractTimeoutMs ?? 120_000,
      deliverMaxAttempts: o.deliverMaxAttempts ?? 8,
      deliverBackoffMs: o.deliverBackoffMs ?? defaultDeliverBackoff,
      webhookTimeoutMs: o.webhookTimeoutMs ?? 10_000,
      signal: this.abort.signal,
      // A failed delivery is the tenant's to fix (their receiver): say so with the cause, at warn.
      onDeliveryFailed: (f) => this.options.logger.warn(f, f.willRetry ? 'analysis_success webhook not delivered: will retry' : 'analysis_success webhook not delivered: given up'),
    };
  }

  private async process(job: AnalysisJobRow): Promise<void> {
    let result: StepResult;
    try {
      result = job.kind === 'extract' ? await runExtract(this.deps(), job) : await runDeliver(this.deps(), job);
    } catch (error) {
      // Unexpected (e.g. the database went away): leave the job to its lease, it is retaken later.
      if (!this.stopped) this.options.logger.error({ err: error, jobId: job.id, kind: job.kind }, 'analysis job crashed');
      jobsTotal.inc({ kind: job.kind, result: 'crashed' });
      return;
    }
    jobsTotal.inc({ kind: job.kind, result });
    const log = { jobId: job.id, callId: job.call_id, kind: job.kind, attempt: job.attempts, result };
    if (result === 'failed') this.options.logger.warn(log, 'analysis job failed');
    else this.options.logger.debug(log, 'analysis job ran');
    if (job.kind === 'extract' && result === 'done') await this.observeLatency(job.call_id);
  }

  private async observeLatency(callId: string): Promise<void> {
    const row = await this.options.db.selectFrom('calls').select(['ended_at', 'analysis_completed_at']).where('id', '=', callId).executeTakeFirst();
    if (row?.ended_at && row.analysis_completed_at) analysisLatency.observe((row.analysis_completed_at.getTime() - row.ended_at.getTime()) / 1000);
  }
}
