import { webhookHost, withoutUrlCredentials } from '../../platform/webhooks/log-safe.js';
import type { Kysely } from 'kysely';
import { isAppError } from '../../../core/errors.js';
import { getTranscript, toCallRecord } from '../calls/call-repository.js';
import { isProviderError, ProviderError } from '../../platform/llm/chat-provider.js';
import type { OutboundHttp } from '../../platform/net/outbound-http.js';
import { localTime } from '../recipes/runtime/call-context.js';
import type { Database } from '../../platform/store/schema.js';
import { enqueueJob, finishJob, releaseJob, retryJob, type AnalysisJobRow, type ExtractPayload } from './analysis-jobs.js';
import { analysisSuccessPayload, deliverWebhook } from './analysis-webhook.js';
import type { InsightExtractor } from './insight-extractor.js';

/**
 * What one claimed job does. Extraction: transcript -> extractor -> typed values -> call
 * `completed` (or `failed` with the reason) and the webhook job queued in the same transaction.
 * Delivery: the `analysis_success` POST with retries. Both retry only what may succeed later,
 * with backoff, within bounds.
 */
export interface TenantWebhook {
  readonly url?: string;
  readonly secret?: string;
}

export interface StepDeps {
  readonly db: Kysely<Database>;
  readonly workerId: string;
  readonly now: () => number;
  readonly extractor: InsightExtractor;
  readonly http: OutboundHttp;
  readonly tenantWebhook: (tenantId: string) => Promise<TenantWebhook | undefined>;
  readonly extractMaxAttempts: number;
  readonly extractBackoffMs: (attempt: number) => number;
  readonly extractTimeoutMs: number;
  readonly deliverMaxAttempts: number;
  readonly deliverBackoffMs: (attempt: number) => number;
  readonly webhookTimeoutMs: number;
  readonly signal: AbortSignal;
  /** A delivery that did not succeed (retried or given up): the worker logs it as a warning. */
  readonly onDeliveryFailed?: (failure: DeliveryFailure) => void;
}

export interface DeliveryFailure {
  readonly jobId: string;
  readonly callId: string;
  /** The receiver's host: never the whole URL, which may carry credentials. */
  readonly host: string;
  readonly status: number | undefined;
  readonly error: string;
  readonly attempt: number;
  readonly willRetry: boolean;
}

export type StepResult = 'done' | 'retry' | 'failed' | 'skipped' | 'released' | 'lost';

export interface DeliverPayload {
  readonly parameterNames: readonly string[];
}

export async function runExtract(deps: StepDeps, job: AnalysisJobRow): Promise<StepResult> {
  const { db } = deps;
  const row = await db
    .selectFrom('calls')
    .innerJoin('tenants', 'tenants.id', 'calls.tenant_id')
    .selectAll('calls')
    .select('tenants.timezone as tenant_timezone')
    .where('calls.id', '=', job.call_id)
    .executeTakeFirst();
  if (!row) return (await finishJob(db, job, deps.workerId, { state: 'skipped', at: new Date(deps.now()), error: 'call no longer exists' })) ? 'skipped' : 'lost';
  const { parameters } = job.payload as ExtractPayload;
  let values: Record<string, unknown> = {};
  let issues: readonly string[] = [];
  const timeout = AbortSignal.timeout(deps.extractTimeoutMs);
  try {
    const transcript = parameters.length > 0 ? await getTranscript(db, job.call_id) : [];
    // Nothing was said (e.g. the caller hung up at once): every value is unknown; no model call.
    if (parameters.length > 0 && transcript.length === 0) values = Object.fromEntries(parameters.map((p) => [p.name, null]));
    else if (parameters.length > 0) {
      const signal = AbortSignal.any([deps.signal, timeout]);
      const today = localTime((row.ended_at ?? row.started_at).getTime(), row.tenant_timezone).date;
      const result = await deps.extractor.extract({ parameters, transcript, today, tenantId: row.tenant_id, ...(row.language ? { language: row.language } : {}), signal });
      values = { ...result.values };
      issues = result.issues;
    }
  } catch (error) {
    // Our own deadline cancels the request, which the provider reports as a cancellation; for
    // the job it is a timeout, and a later attempt may well be faster.
    const timedOut = timeout.aborted && !deps.signal.aborted;
    return failOrRetry(deps, job, timedOut ? new ProviderError(`extraction timed out after ${deps.extractTimeoutMs} ms`, true, undefined, { cause: error }) : error);
  }
  const now = new Date(deps.now());
  return db.transaction().execute(async (trx) => {
    if (!(await finishJob(trx, job, deps.workerId, { state: 'done', at: now, ...(issues.length ? { error: issues.join('; ').slice(0, 1000) } : {}) }))) return 'lost';
    await trx
      .updateTable('calls')
      .set({ analysis_status: 'completed', analysis_error: null, analysis_completed_at: now, insights: JSON.stringify(values), updated_at: now })
      .where('id', '=', job.call_id)
      .execute();
    const payload: DeliverPayload = { parameterNames: parameters.map((p) => p.name) };
    await enqueueJob(trx, { callId: job.call_id, tenantId: job.tenant_id, kind: 'deliver', runAt: now, deadlineAt: now, payload });
    return 'done';
  });
}

async function failOrRetry(deps: StepDeps, job: AnalysisJobRow, error: unknown): Promise<StepResult> {
  // Cancelled because this worker is stopping: the job goes back for another worker, unharmed.
  if (deps.signal.aborted) return (await releaseJob(deps.db, job, deps.workerId, new Date(deps.now()))) ? 'released' : 'lost';
  const reason = error instanceof Error ? error.message : String(error);
  const retryable = isProviderError(error) || isAppError(error) ? (error as { retryable: boolean }).retryable : true;
  const now = deps.now();
  const next = now + deps.extractBackoffMs(job.attempts);
  if (retryable && job.attempts < deps.extractMaxAttempts && next <= job.deadline_at.getTime()) {
    return (await retryJob(deps.db, job, deps.workerId, new Date(next), reason)) ? 'retry' : 'lost';
  }
  const why = !retryable
    ? reason
    : job.attempts >= deps.extractMaxAttempts
      ? `gave up after ${job.attempts} attempts: ${reason}`
      : `gave up after ${job.attempts} attempts (analysis window ends ${job.deadline_at.toISOString()}): ${reason}`;
  return deps.db.transaction().execute(async (trx) => {
    if (!(await finishJob(trx, job, deps.workerId, { state: 'failed', at: new Date(now), error: why.slice(0, 1000) }))) return 'lost';
    await trx
      .updateTable('calls')
      .set({ analysis_status: 'failed', analysis_error: why.slice(0, 1000), updated_at: new Date(now) })
      .where('id', '=', job.call_id)
      .execute();
    return 'failed';
  });
}

export async function runDeliver(deps: StepDeps, job: AnalysisJobRow): Promise<StepResult> {
  const { db } = deps;
  const at = (): Date => new Date(deps.now());
  const row = await db.selectFrom('calls').selectAll().where('id', '=', job.call_id).executeTakeFirst();
  const webhook = row ? await deps.tenantWebhook(job.tenant_id) : undefined;
  if (!row || !webhook?.url) {
    const why = row ? 'the tenant has no webhook URL configured' : 'call no longer exists';
    return (await finishJob(db, job, deps.workerId, { state: 'skipped', at: at(), error: why })) ? 'skipped' : 'lost';
  }
  const { parameterNames } = job.payload as DeliverPayload;
  const payload = analysisSuccessPayload(job.id, toCallRecord(row), parameterNames);
  const result = await deliverWebhook(deps.http, { tenantId: job.tenant_id, url: webhook.url, ...(webhook.secret ? { secret: webhook.secret } : {}) }, payload, {
    nowMs: deps.now(),
    timeoutMs: deps.webhookTimeoutMs,
    signal: deps.signal,
  });
  if (result.ok) return (await finishJob(db, job, deps.workerId, { state: 'done', at: at(), status: result.status })) ? 'done' : 'lost';
  if (deps.signal.aborted) return (await releaseJob(db, job, deps.workerId, at())) ? 'released' : 'lost';
  deps.onDeliveryFailed?.({
    jobId: job.id,
    callId: job.call_id,
    host: webhookHost(webhook.url),
    status: result.status,
    error: withoutUrlCredentials(result.error),
    attempt: job.attempts,
    willRetry: !result.permanent && job.attempts < deps.deliverMaxAttempts,
  });
  if (result.permanent || job.attempts >= deps.deliverMaxAttempts) {
    const why = result.permanent ? result.error : `gave up after ${job.attempts} attempts: ${result.error}`;
    return (await finishJob(db, job, deps.workerId, { state: 'failed', at: at(), error: why, ...(result.status ? { status: result.status } : {}) })) ? 'failed' : 'lost';
  }
  const next = new Date(deps.now() + deps.deliverBackoffMs(job.attempts));
  return (await retryJob(db, job, deps.workerId, next, result.error, result.status)) ? 'retry' : 'lost';
}
