import { PostgresBackend, PostgresJobRepository } from '@agendajs/postgres-backend';
import { Agenda, type JobWithId } from 'agenda';
import type { Logger } from '../../../core/logger.js';
import { ensureAgendaSchema } from './agenda-schema.js';

/**
 * Agenda 6 on PostgreSQL (`@agendajs/postgres-backend`): one one-off job per due moment of a
 * message ("look at message X at T"). Jobs carry no authority: the scheduler re-reads the message
 * under a row lock, so a duplicate, stale or early job is harmless. A new job is created for each
 * reschedule instead of moving the old one, because Agenda clears a one-off job's next run when
 * its handler returns, which would race with a handler that reschedules its own message.
 */
export const campaignJobName = 'campaign-message';

export interface AgendaJobsOptions {
  readonly url: string;
  readonly logger: Logger;
  /** Instance name stored as lastModifiedBy. */
  readonly name: string;
  /** Fallback poll when a NOTIFY is missed; default 5 s. */
  readonly processEveryMs?: number;
  /** Jobs handled at once by this instance; each only claims and starts a call, so it is quick. */
  readonly concurrency?: number;
  readonly tableName?: string;
}

interface JobData {
  readonly messageId: string;
}

type State = 'idle' | 'connected' | 'processing' | 'draining' | 'closed';

export class AgendaJobs {
  private readonly backend: PostgresBackend;
  readonly agenda: Agenda;
  private state: State = 'idle';
  // Runs of this instance between Agenda's 'start' and 'complete', and the removals of finished
  // jobs: the pool must outlive both, or Agenda's last write of a run waits forever for a
  // connection of the ended pool and its liveness check later fails the run ("no lockedAt date").
  private running = 0;
  private readonly succeeded = new Set<string>();
  private readonly removals = new Set<Promise<unknown>>();
  private idleWaiters: (() => void)[] = [];
  private schemaReady: Promise<void> | undefined;

  private get tableName(): string {
    return this.options.tableName ?? 'agenda_jobs';
  }

  constructor(private readonly options: AgendaJobsOptions) {
    // The schema is made in connect(), under a lock (agenda-schema.ts): Agenda's own connect,
    // which starts right in its constructor, only checks the connection.
    this.backend = new PostgresBackend({ connectionString: options.url, tableName: this.tableName, channelName: this.tableName, ensureSchema: false });
    this.agenda = new Agenda({
      backend: this.backend,
      name: options.name,
      processEvery: options.processEveryMs ?? 5_000,
      maxConcurrency: (options.concurrency ?? 50) * 2,
      defaultConcurrency: options.concurrency ?? 50,
    });
    this.agenda.on('error', (error: Error) => options.logger.error({ err: error }, 'agenda error'));
    // Events with remote=true are other instances' runs relayed through the notification channel.
    this.agenda.on('start', (_job: JobWithId, remote?: boolean) => {
      if (remote !== true) this.running += 1;
    });
    this.agenda.on('success', (job: JobWithId, remote?: boolean) => {
      if (remote !== true) this.succeeded.add(String(job.attrs._id));
    });
    this.agenda.on('complete', (job: JobWithId, remote?: boolean) => {
      if (remote === true) return;
      this.running -= 1;
      // Agenda's own removeOnComplete runs after 'complete' where it cannot be awaited; a done
      // one-off job is removed here instead, tracked so close() waits for it.
      const id = String(job.attrs._id);
      if (this.succeeded.delete(id) && !job.attrs.nextRunAt) {
        const removal = this.agenda
          .cancel({ id: job.attrs._id })
          .catch((error: unknown) => options.logger.warn({ err: error, jobId: id }, 'could not remove a finished campaign job'))
          .finally(() => this.removals.delete(removal));
        this.removals.add(removal);
      }
      if (this.running === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    });
  }

  /** Agenda's table, made once per instance (agenda-schema.ts). */
  private schema(): Promise<void> {
    // A failure (database down at start) is not kept: the next call tries again.
    this.schemaReady ??= ensureAgendaSchema(this.options.url, this.tableName).catch((error: unknown) => {
      this.schemaReady = undefined;
      throw error;
    });
    return this.schemaReady;
  }

  /** Connects for scheduling only. The notification channel must be connected explicitly: Agenda only does it in start(). */
  async connect(): Promise<void> {
    if (this.state === 'closed') throw new Error('campaign jobs are closed');
    if (this.state !== 'idle') return;
    await this.schema();
    await this.agenda.ready;
    await this.backend.notificationChannel?.connect();
    this.state = 'connected';
  }

  /** Starts processing jobs with `handler` (the scheduler's runMessage). */
  async process(handler: (messageId: string) => Promise<unknown>): Promise<void> {
    // Not connect(): Agenda's start() connects the notification channel itself, and a second
    // LISTEN connection would outlive close() and keep the process from exiting.
    await this.schema();
    this.agenda.define<JobData>(
      campaignJobName,
      async (job) => {
        await handler(job.attrs.data.messageId);
      },
      // lockLimit: without it Agenda locks every due job (one query each) before running the first,
      // which for thousands of jobs due at once delays them all.
      { concurrency: this.options.concurrency ?? 50, lockLimit: (this.options.concurrency ?? 50) * 2, lockLifetime: 60_000, removeOnComplete: false },
    );
    await this.agenda.start();
    this.state = 'processing';
  }

  /**
   * Stops taking jobs (those locked here but not started are unlocked for other instances) and
   * waits up to `waitMs` for the runs in progress to finish. Scheduling still works until close().
   */
  async stopProcessing(waitMs = 10_000): Promise<void> {
    if (this.state !== 'processing') return;
    this.state = 'draining';
    // closeConnection false: the pool stays for the runs in progress and for enqueue().
    await this.agenda.stop(false);
    if (this.running > 0) {
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        new Promise<boolean>((r) => this.idleWaiters.push(() => r(true))),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(false), waitMs))),
      ]);
      clearTimeout(timer);
      if (!finished) this.options.logger.warn({ running: this.running }, 'campaign jobs still running when stopping; their locks expire');
    }
    await Promise.allSettled([...this.removals]);
    if (this.running === 0) await this.releaseStrayLocks();
  }

  /**
   * Agenda's stop() unlocks the jobs it holds in its queue, but a lock query already on its way
   * when stop() ran lands afterwards: that job stays locked by this instance for the lock's whole
   * lifetime (60 s) although nothing runs it (seen with both cores busy). With no run of ours in
   * progress, every lock under our name is such a stray: give it back so another instance takes
   * the job now. A job is never run twice for it: the scheduler re-reads the message under a row lock.
   */
  private async releaseStrayLocks(): Promise<void> {
    const repository = this.backend.repository;
    if (!(repository instanceof PostgresJobRepository)) return;
    await repository
      .getPool()
      .query(`UPDATE "${this.tableName}" SET locked_at = NULL WHERE locked_at IS NOT NULL AND last_modified_by = $1 AND name = $2`, [this.options.name, campaignJobName])
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'could not release the campaign job locks of a stopped worker; they expire'));
  }

  async enqueue(messageId: string, dueAt: number): Promise<void> {
    await this.connect();
    await this.agenda.schedule<JobData>(new Date(dueAt), campaignJobName, { messageId });
  }

  /** Stops processing (see stopProcessing) and disconnects; enqueue() fails afterwards instead of reconnecting. */
  async close(waitMs?: number): Promise<void> {
    if (this.state === 'closed') return;
    await this.stopProcessing(waitMs);
    const connected = this.state !== 'idle';
    this.state = 'closed';
    if (!connected) return;
    await this.backend.notificationChannel?.disconnect();
    await this.backend.disconnect();
  }
}
