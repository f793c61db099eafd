import type { Kysely, Selectable } from 'kysely';
import type { CallsTable, Database } from '../../platform/store/schema.js';
import type { AnalysisState, CallOutcome, CallRecord, CallStep, InsightValues, TranscriptLine } from './call-types.js';

/** Reading call records: one call, its transcript and recipe path, and filtered keyset pages. */
export type CallRow = Selectable<CallsTable>;

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => uuidPattern.test(value);

export function toCallRecord(row: CallRow): CallRecord {
  return {
    id: row.id,
    sipCallId: row.sip_call_id,
    sipTransport: row.sip_transport,
    sipRemoteAddress: row.sip_remote_address,
    codec: row.codec,
    tenantId: row.tenant_id,
    direction: row.direction,
    phoneNumberId: row.phone_number_id,
    phoneNumber: row.phone_number,
    remoteNumber: row.remote_number,
    campaignId: row.campaign_id,
    messageId: row.message_id,
    attempt: row.attempt,
    recipeId: row.recipe_id,
    language: row.language,
    startedAt: row.started_at,
    answeredAt: row.answered_at,
    endedAt: row.ended_at,
    status: row.status,
    outcome: row.outcome as CallOutcome | null,
    sipStatus: row.sip_status,
    durationMs: row.duration_ms,
    endReason: row.end_reason,
    disposition: row.disposition,
    variables: (row.variables ?? {}) as Record<string, unknown>,
    recordingRef: row.recording_ref,
    answeringMachine: row.amd_verdict ? { verdict: row.amd_verdict, afterMs: row.amd_ms ?? 0 } : null,
    analysis: {
      status: row.analysis_status as AnalysisState,
      error: row.analysis_error,
      completedAt: row.analysis_completed_at,
      values: (row.insights ?? null) as InsightValues | null,
    },
  };
}

export interface CallFilter {
  readonly from?: Date;
  /** Exclusive. */
  readonly to?: Date;
  readonly campaignId?: string;
  /** Matches the platform's number or the other party's. */
  readonly number?: string;
  /** The SIP Call-ID of the call's dialog (a web page finds the record of the call it placed). */
  readonly sipCallId?: string;
  readonly outcome?: readonly string[];
  readonly disposition?: readonly string[];
  /** The record's end reason (closed, callerHangup, transferred, silenceTimeout, ...). */
  readonly endReason?: readonly string[];
  readonly direction?: readonly string[];
  readonly analysisStatus?: readonly string[];
}

/** Position after the last row of a page, in the (started_at, id) order (the Master Report). */
export interface CallCursor {
  readonly startedAt: Date;
  readonly id: string;
}

type CallQuery = ReturnType<typeof callsOfTenant>;
const callsOfTenant = (db: Kysely<Database>, tenantId: string) => db.selectFrom('calls').where('calls.tenant_id', '=', tenantId);

/** The filter's conditions on a query of one tenant's calls (the list and the Master Report share them). */
export function whereFilter(query: CallQuery, filter: CallFilter): CallQuery {
  let q = query;
  if (filter.from) q = q.where('calls.started_at', '>=', filter.from);
  if (filter.to) q = q.where('calls.started_at', '<', filter.to);
  if (filter.campaignId) q = q.where('calls.campaign_id', '=', filter.campaignId);
  if (filter.number) {
    const number = filter.number;
    q = q.where((eb) => eb.or([eb('calls.phone_number', '=', number), eb('calls.remote_number', '=', number)]));
  }
  if (filter.sipCallId) q = q.where('calls.sip_call_id', '=', filter.sipCallId);
  if (filter.outcome?.length) q = q.where('calls.outcome', 'in', [...filter.outcome]);
  if (filter.disposition?.length) q = q.where('calls.disposition', 'in', [...filter.disposition]);
  if (filter.endReason?.length) q = q.where('calls.end_reason', 'in', [...filter.endReason]);
  if (filter.direction?.length) q = q.where('calls.direction', 'in', [...(filter.direction as CallRow['direction'][])]);
  if (filter.analysisStatus?.length) q = q.where('calls.analysis_status', 'in', [...(filter.analysisStatus as CallRow['analysis_status'][])]);
  return q;
}

/**
 * Selects one tenant's calls matching `filter` after `after`, oldest first (the Master Report's
 * order). Keyset pagination on (started_at, id), served by the (tenant_id, started_at, id) index:
 * every page costs the same however deep it is, on PostgreSQL and PGlite alike.
 */
export function filteredCalls(db: Kysely<Database>, tenantId: string, filter: CallFilter, after?: CallCursor) {
  let query = whereFilter(callsOfTenant(db, tenantId), filter);
  if (after) {
    // A row-value comparison, not `a > x OR (a = x AND b > y)`: only this form lets PostgreSQL
    // start the index scan at the cursor instead of re-reading every earlier row per page.
    query = query.where((eb) => eb(eb.refTuple('calls.started_at', 'calls.id'), '>', eb.tuple(after.startedAt, after.id)));
  }
  return query.orderBy('calls.started_at').orderBy('calls.id');
}

export async function getCall(db: Kysely<Database>, tenantId: string, callId: string): Promise<CallRecord | undefined> {
  if (!isUuid(callId)) return undefined;
  const row = await db.selectFrom('calls').selectAll().where('tenant_id', '=', tenantId).where('id', '=', callId).executeTakeFirst();
  return row ? toCallRecord(row) : undefined;
}

export async function getTranscript(db: Kysely<Database>, callId: string): Promise<TranscriptLine[]> {
  const row = await db.selectFrom('call_transcripts').select('entries').where('call_id', '=', callId).executeTakeFirst();
  return (row?.entries ?? []) as TranscriptLine[];
}

/** One call's transcript and the path its recipe took; both empty while the call is live. */
export async function getConversation(db: Kysely<Database>, callId: string): Promise<{ transcript: TranscriptLine[]; steps: CallStep[] }> {
  const row = await db.selectFrom('call_transcripts').select(['entries', 'steps']).where('call_id', '=', callId).executeTakeFirst();
  return { transcript: (row?.entries ?? []) as TranscriptLine[], steps: (row?.steps ?? []) as CallStep[] };
}
