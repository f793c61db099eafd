import type Router from '@koa/router';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import { AppError, notFound } from '../../../core/errors.js';
import { fromZodError } from '../../platform/http/error-response.js';
import { authenticate } from '../route-kit/auth.js';
import { pageQuerySchema } from '../route-kit/list-query.js';
import { tenantInScope, type TenantRef } from '../route-kit/tenant-scope.js';
import { jobsOfCall } from '../../features/insights/analysis-jobs.js';
import type { Database } from '../../platform/store/schema.js';
import { parseCallFilter, parseListOrder } from '../../features/calls/call-query.js';
import { decodeListCursor, encodeListCursor, listCallsSorted } from '../../features/calls/call-list.js';
import { getCall, getConversation } from '../../features/calls/call-repository.js';
import type { CallRecord, TranscriptLine } from '../../features/calls/call-types.js';
import { parseRange, type RecordingStore } from '../../features/calls/recording-store.js';
import { callSteps } from '../../features/calls/run-record.js';

/**
 * Call records under `/v1/tenants/:clientId/calls`: list with filters, one call with transcript,
 * recipe path and insights, and its recording. Same bearer auth and tenant scoping as the rest
 * of the management API (another tenant's call answers 404, exactly like a missing one).
 */
export interface CallRouteDeps {
  readonly db: Kysely<Database>;
  readonly operatorToken: string;
  readonly recordings: RecordingStore;
}

export interface ScopedTenant extends TenantRef {
  readonly timezone: string;
}

export async function scopedTenant(ctx: Koa.Context, deps: Pick<CallRouteDeps, 'db' | 'operatorToken'>): Promise<ScopedTenant> {
  const principal = await authenticate(ctx, deps.db, deps.operatorToken);
  const tenant = await tenantInScope(deps.db, principal, (ctx.params as { clientId: string }).clientId, ctx);
  const row = await deps.db.selectFrom('tenants').select('timezone').where('id', '=', tenant.id).executeTakeFirstOrThrow();
  return { ...tenant, timezone: row.timezone };
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function renderCall(tenant: TenantRef, call: CallRecord, basePath: string) {
  return {
    id: call.id,
    sipCallId: call.sipCallId,
    sip: { transport: call.sipTransport, remoteAddress: call.sipRemoteAddress, codec: call.codec },
    tenant: tenant.clientId,
    direction: call.direction,
    phoneNumber: call.phoneNumber,
    phoneNumberId: call.phoneNumberId,
    contactNumber: call.remoteNumber,
    campaignId: call.campaignId,
    messageId: call.messageId,
    attempt: call.attempt,
    recipeId: call.recipeId,
    language: call.language,
    status: call.status,
    startedAt: call.startedAt.toISOString(),
    answeredAt: iso(call.answeredAt),
    endedAt: iso(call.endedAt),
    durationSeconds: call.durationMs === null ? null : Math.round(call.durationMs / 1000),
    outcome: call.outcome,
    sipStatus: call.sipStatus,
    endReason: call.endReason,
    disposition: call.disposition,
    variables: call.variables,
    recording: call.recordingRef ? { url: `${basePath}/${call.id}/recording` } : null,
    answeringMachine: call.answeringMachine ? { verdict: call.answeringMachine.verdict, decidedAfterMs: call.answeringMachine.afterMs } : null,
    analysis: {
      status: call.analysis.status,
      error: call.analysis.error,
      completedAt: iso(call.analysis.completedAt),
      insights: call.analysis.values,
    },
  };
}

/** Transcript lines on the wire: ISO times, and the spec's "Interrupted" tag on cut replies. */
export function renderTranscript(lines: readonly TranscriptLine[]) {
  return lines.map((line) => ({
    at: new Date(line.at).toISOString(),
    speaker: line.speaker,
    text: line.text,
    ...(line.blockId ? { blockId: line.blockId } : {}),
    ...(line.dtmf ? { dtmf: true } : {}),
    ...(line.interrupted ? { interrupted: true, tags: ['Interrupted'], ...(line.unspoken ? { unspoken: line.unspoken } : {}) } : {}),
    ...(line.ignored ? { ignored: line.ignored } : {}),
  }));
}


export function mountCallRoutes(router: Router, deps: CallRouteDeps): void {
  const { db } = deps;
  const collection = '/tenants/:clientId/calls';

  const load = async (ctx: Koa.Context): Promise<{ tenant: ScopedTenant; call: CallRecord }> => {
    const tenant = await scopedTenant(ctx, deps);
    const id = (ctx.params as { id: string }).id;
    const call = await getCall(db, tenant.id, id);
    if (!call) throw notFound(`call "${id}"`);
    return { tenant, call };
  };

  router.get(collection, async (ctx) => {
    const tenant = await scopedTenant(ctx, deps);
    const query = ctx.query as Record<string, string | string[] | undefined>;
    const filter = parseCallFilter(query, tenant.timezone, ['limit', 'cursor', 'sort', 'order']);
    const order = parseListOrder(query);
    const page = pageQuerySchema.safeParse({ limit: query.limit, cursor: query.cursor });
    if (!page.success) throw fromZodError(page.error, 'query');
    const cursor = page.data.cursor === undefined ? undefined : decodeListCursor(page.data.cursor);
    const badCursor = (message: string) => new AppError('invalid_argument', `cursor ${message}`, { issues: [{ path: 'cursor', message }] });
    if (typeof cursor === 'string') throw badCursor(cursor);
    if (cursor && (cursor.sort !== order.sort || cursor.order !== order.order)) {
      throw badCursor(`belongs to sort=${cursor.sort}&order=${cursor.order}, not sort=${order.sort}&order=${order.order}: start again without a cursor`);
    }
    const result = await listCallsSorted(db, tenant.id, filter, { ...order, limit: page.data.limit, ...(cursor ? { cursor } : {}) });
    const base = `/v1/tenants/${tenant.clientId}/calls`;
    ctx.body = {
      items: result.items.map((c) => renderCall(tenant, c, base)),
      ...(result.next ? { nextCursor: encodeListCursor(result.next) } : {}),
      ...(result.prev ? { prevCursor: encodeListCursor(result.prev) } : {}),
    };
  });

  router.get(`${collection}/:id`, async (ctx) => {
    const { tenant, call } = await load(ctx);
    const jobs = await jobsOfCall(db, call.id);
    const deliver = jobs.find((j) => j.kind === 'deliver');
    const body = renderCall(tenant, call, `/v1/tenants/${tenant.clientId}/calls`);
    const conversation = await getConversation(db, call.id);
    ctx.body = {
      ...body,
      analysis: {
        ...body.analysis,
        webhook: deliver
          ? { state: deliver.state, attempts: deliver.attempts, lastStatus: deliver.last_status, lastError: deliver.last_error, deliveredAt: deliver.state === 'done' ? iso(deliver.finished_at) : null }
          : null,
      },
      transcript: renderTranscript(conversation.transcript),
      steps: callSteps(conversation.steps),
    };
  });

  router.get(`${collection}/:id/recording`, async (ctx) => {
    const { call } = await load(ctx);
    const file = call.recordingRef ? await deps.recordings.find(call.recordingRef) : undefined;
    if (!file) throw notFound(`recording of call "${call.id}"`);
    ctx.set('Accept-Ranges', 'bytes');
    ctx.set('Content-Disposition', `inline; filename="call-${call.id}${call.recordingRef?.match(/\.[a-z0-9]+$/i)?.[0] ?? ''}"`);
    const range = parseRange(ctx.get('Range') || undefined, file.size);
    if (range === 'unsatisfiable') {
      ctx.status = 416;
      ctx.set('Content-Range', `bytes */${file.size}`);
      ctx.body = { code: 'out_of_range', message: `the recording has ${file.size} bytes` };
      return;
    }
    ctx.type = file.contentType;
    if (range) {
      ctx.status = 206;
      ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${file.size}`);
      ctx.length = range.end - range.start + 1;
      ctx.body = file.open(range);
    } else {
      ctx.length = file.size;
      ctx.body = file.open();
    }
  });
}
