import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { InsightParameter } from '../../model/domain/insight-parameter.js';
import type { AnalysisJobsTable, Database } from '../../platform/store/schema.js';

/**
 * The durable post-call queue: a plain table claimed with `FOR UPDATE SKIP LOCKED` under a lease,
 * which behaves the same on PostgreSQL and PGlite (no LISTEN/NOTIFY, no extra driver). A worker
 * that dies mid-job simply stops renewing its lease and the job is claimed again once it lapses;
 * every write after the claim is fenced on `locked_by`, so a worker that lost its lease cannot
 * overwrite the result of the one that took over.
 */
export type AnalysisJobKind = AnalysisJobsTable['kind'];
export type AnalysisJobRow = Selectable<AnalysisJobsTable>;

export interface ExtractPayload {
  readonly parameters: readonly InsightParameter[];
}

type Db = Kysely<Database> | Transaction<Database>;

export async function enqueueJob(
  db: Db,
  job: { callId: string; tenantId: string; kind: AnalysisJobKind; runAt: Date; deadlineAt: Date; payload?: unknown },
): Promise<void> {
  await db
    .insertInto('analysis_jobs')
    .values({
      call_id: job.callId,
      tenant_id: job.tenantId,
      kind: job.kind,
      state: 'pending',
      payload: JSON.stringify(job.payload ?? {}),
      run_at: job.runAt,
      deadline_at: job.deadlineAt,
    })
    // Recording the same hang-up twice must not queue a second analysis.
    .onConflict((oc) => oc.columns(['call_id', 'kind']).doNothing())
    .execute();
}

/**
 * Claims up to `limit` due jobs for `workerId`: pending jobs whose time has come, and running
 * jobs whose lease has lapsed (their worker crashed or stalled). Each claim counts an attempt.
 */
export async function claimJobs(db: Kysely<Database>, workerId: string, limit: number, now: Date, leaseMs: number): Promise<AnalysisJobRow[]> {
  const leaseUntil = new Date(now.getTime() + leaseMs);
  const result = await sql<AnalysisJobRow>`
    update analysis_jobs
       set state = 'running', attempts = attempts + 1, locked_by = ${workerId}, lease_until = ${leaseUntil}
     where id in (
       select id from analysis_jobs
        where (state = 'pending' and run_at <= ${now}) or (state = 'running' and lease_until < ${now})
        order by run_at
        limit ${limit}
        for update skip locked)
    returning *`.execute(db);
  return result.rows;
}

/** Extends the lease of jobs this worker still holds. */
export async function renewLeases(db: Kysely<Database>, workerId: string, ids: readonly string[], until: Date): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('analysis_jobs')
    .set({ lease_until: until })
    .where('id', 'in', [...ids])
    .where('locked_by', '=', workerId)
    .where('state', '=', 'running')
    .execute();
}

/** Ends a job this worker holds; false when the lease was lost to another worker meanwhile. */
export async function finishJob(
  db: Db,
  job: AnalysisJobRow,
  workerId: string,
  outcome: { state: 'done' | 'failed' | 'skipped'; at: Date; error?: string; status?: number },
): Promise<boolean> {
  const result = await db
    .updateTable('analysis_jobs')
    .set({
      state: outcome.state,
      finished_at: outcome.at,
      locked_by: null,
      lease_until: null,
      last_error: outcome.error ?? null,
      last_status: outcome.status ?? null,
    })
    .where('id', '=', job.id)
    .where('locked_by', '=', workerId)
    .where('state', '=', 'running')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Puts a held job back to run again at `runAt` after a retryable failure. */
export async function retryJob(db: Db, job: AnalysisJobRow, workerId: string, runAt: Date, error: string, status?: number): Promise<boolean> {
  const result = await db
    .updateTable('analysis_jobs')
    .set({ state: 'pending', run_at: runAt, locked_by: null, lease_until: null, last_error: error, last_status: status ?? null })
    .where('id', '=', job.id)
    .where('locked_by', '=', workerId)
    .where('state', '=', 'running')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Hands a held job back at once, not counting the interrupted attempt: the worker is shutting
 * down, which says nothing about the job.
 */
export async function releaseJob(db: Db, job: AnalysisJobRow, workerId: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('analysis_jobs')
    .set((eb) => ({ state: 'pending', run_at: at, locked_by: null, lease_until: null, attempts: eb('attempts', '-', 1) }))
    .where('id', '=', job.id)
    .where('locked_by', '=', workerId)
    .where('state', '=', 'running')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function jobsOfCall(db: Kysely<Database>, callId: string): Promise<AnalysisJobRow[]> {
  return db.selectFrom('analysis_jobs').selectAll().where('call_id', '=', callId).orderBy('created_at').execute();
}

/** Open jobs and the age of the oldest due one: the backlog a dashboard or alert watches. */
export async function backlog(db: Kysely<Database>, now: Date): Promise<{ open: number; oldestDueMs: number }> {
  const row = await db
    .selectFrom('analysis_jobs')
    .select((eb) => [eb.fn.countAll<string | number | bigint>().as('open'), eb.fn.min('run_at').as('oldest')])
    .where('state', 'in', ['pending', 'running'])
    .executeTakeFirstOrThrow();
  const oldest = row.oldest ? new Date(row.oldest as Date | string).getTime() : now.getTime();
  return { open: Number(row.open), oldestDueMs: Math.max(0, now.getTime() - oldest) };
}
