import { PostgresBackend } from '@agendajs/postgres-backend';
import { Agenda } from 'agenda';
import type { Logger } from '../../core/logger.js';

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

export class AgendaJobs {
  private readonly backend: PostgresBackend;
  readonly agenda: Agenda;
  private connected = false;
  private processing = false;

  constructor(private readonly options: AgendaJobsOptions) {
    this.backend = new PostgresBackend({ connectionString: options.url, tableName: options.tableName ?? 'agenda_jobs', channelName: options.tableName ?? 'agenda_jobs' });
    this.agenda = new Agenda({
      backend: this.backend,
      name: options.name,
      processEvery: options.processEveryMs ?? 5_000,
      maxConcurrency: (options.concurrency ?? 50) * 2,
      defaultConcurrency: options.concurrency ?? 50,
      removeOnComplete: true,
    });
    this.agenda.on('error', (error: Error) => options.logger.error({ err: error }, 'agenda error'));
  }

  /** Connects for scheduling only. The notification channel must be connected explicitly: Agenda only does it in start(). */
  async connect(): Promise<void> {
    if (this.connected) return;
    await this.agenda.ready;
    await this.backend.notificationChannel?.connect();
    this.connected = true;
  }

  /** Starts processing jobs with `handler` (the scheduler's runMessage). */
  async process(handler: (messageId: string) => Promise<unknown>): Promise<void> {
    this.agenda.define<JobData>(
      campaignJobName,
      async (job) => {
        await handler(job.attrs.data.messageId);
      },
      // lockLimit: without it Agenda locks every due job (one query each) before running the first,
      // which for thousands of jobs due at once delays them all.
      { concurrency: this.options.concurrency ?? 50, lockLimit: (this.options.concurrency ?? 50) * 2, lockLifetime: 60_000 },
    );
    await this.agenda.start();
    this.connected = true;
    this.processing = true;
  }

  async enqueue(messageId: string, dueAt: number): Promise<void> {
    await this.connect();
    await this.agenda.schedule<JobData>(new Date(dueAt), campaignJobName, { messageId });
  }

  async close(): Promise<void> {
    if (this.processing) {
      await this.agenda.stop();
    } else if (this.connected) {
      await this.backend.notificationChannel?.disconnect();
      await this.backend.disconnect();
    }
    this.connected = false;
    this.processing = false;
  }
}
