import type { ColumnType, Generated } from 'kysely';

/** Row types as Kysely sees them. One interface per table; `Database` lists them all. */

export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface TenantsTable {
  id: Generated<string>;
  client_id: string;
  name: string;
  timezone: Generated<string>;
  /** TenantSettings (control-api/model/domain/tenant.ts); the webhook secret inside it is sealed. */
  settings: JsonColumnWithDefault;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ApiTokensTable {
  id: Generated<string>;
  tenant_id: string;
  name: string;
  token_hash: string;
  token_prefix: string;
  scopes: string[];
  expires_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
  created_at: Generated<Date>;
}

export interface PlantsTable {
  /** `tenant:<uuid>` or `static:<sha-256 hex>`: who may see the plant (control-api/api/sandbox). */
  owner: string;
  /** int8: bigint on both drivers (see database.ts). */
  id: ColumnType<bigint, bigint, never>;
  tenant_id: string | null;
  name: string;
  tag: string | null;
  created_at: Generated<Date>;
}

/** jsonb: read as parsed JSON, written as a JSON string (both drivers accept it). */
export type JsonColumn = ColumnType<unknown, string, string>;
export type JsonColumnWithDefault = ColumnType<unknown, string | undefined, string>;

/** Columns every tenant-scoped resource table shares (migration 0002); `spec` is the validated document. */
export interface ResourceColumns {
  id: Generated<string>;
  tenant_id: string;
  spec: JsonColumn;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface RecipesTable extends ResourceColumns {
  name: string;
}
export interface BusinessHoursProfilesTable extends ResourceColumns {
  name: string;
}
export interface AuthProfilesTable extends ResourceColumns {
  name: string;
}
export interface PronunciationEntriesTable extends ResourceColumns {
  word: string;
}
export interface SpeechProfilesTable extends ResourceColumns {
  name: string;
  language: string;
  gender: string;
  favourite: Generated<boolean>;
}
/** A tenant's star on a built-in speech profile (custom profiles keep theirs in the spec). */
export interface SpeechProfileFavouritesTable {
  tenant_id: string;
  profile_id: string;
  created_at: Generated<Date>;
}
export interface KnowledgeDocumentsTable extends ResourceColumns {
  name: string;
  tags: Generated<string[]>;
}
export interface SipTrunksTable extends ResourceColumns {
  name: string;
  /** Lower-cased IPs / FQDNs of the customer gateways allowed to send INVITEs. */
  termination_addresses: string[];
  /** E.164. */
  dids: Generated<string[]>;
  extension: string | null;
}
export interface PhoneNumbersTable extends ResourceColumns {
  /** Unique across the platform: a number rings one tenant. */
  e164: string;
  recipe_id: string;
  sip_trunk_id: string | null;
  provider: string;
  enabled: boolean;
}
export interface CampaignsTable extends ResourceColumns {
  name: string;
  recipe_id: string;
  phone_number_id: string;
  published: boolean;
}

/** Campaign SendMessage requests (migration 0200, control-api/features/campaigns). */
export interface CampaignMessagesTable {
  id: string;
  tenant_id: string;
  campaign_id: string;
  to_e164: string;
  variables: JsonColumnWithDefault;
  callback_url: string | null;
  callback_state: ColumnType<unknown, string | null, string | null>;
  requested_at: Timestamp;
  bypass_window: boolean;
  idempotency_key: string | null;
  request_hash: string;
  status: string;
  attempts_made: Generated<number>;
  next_attempt_at: NullableTimestamp;
  wait_reason: Generated<string>;
  callback_seq: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** One row per call attempt, inserted before dialing: the exactly-once guard. */
export interface CampaignAttemptsTable {
  message_id: string;
  attempt_no: number;
  campaign_id: string;
  from_e164: string;
  status: string;
  sip_status: number | null;
  reason: string | null;
  worker_id: string;
  lease_until: Timestamp;
  started_at: Timestamp;
  answered_at: NullableTimestamp;
  ended_at: NullableTimestamp;
}

/** Outbox of signed status callbacks. */
export interface CampaignCallbacksTable {
  id: ColumnType<bigint | number, never, never>;
  message_id: string;
  tenant_id: string;
  url: string;
  body: string;
  tries: Generated<number>;
  next_try_at: Timestamp;
  delivered_at: NullableTimestamp;
  given_up_at: NullableTimestamp;
  last_status: number | null;
  last_error: string | null;
  claimed_until: NullableTimestamp;
  created_at: Generated<Date>;
}

/** Call records (migration 0300, control-api/features/calls). */
export interface CallsTable {
  id: Generated<string>;
  tenant_id: string;
  direction: 'inbound' | 'outbound' | 'simulation' | 'web';
  phone_number_id: string | null;
  /** The platform's number (E.164). */
  phone_number: string | null;
  /** The other party (E.164 or SIP user). */
  remote_number: string | null;
  campaign_id: string | null;
  message_id: string | null;
  /** Campaign calls: the attempt (1 = first call, 2 = first retry, ...); null otherwise. */
  attempt: number | null;
  recipe_id: string | null;
  language: string | null;
  started_at: Timestamp;
  answered_at: NullableTimestamp;
  ended_at: NullableTimestamp;
  status: 'in_progress' | 'ended';
  outcome: string | null;
  sip_status: number | null;
  duration_ms: number | null;
  end_reason: string | null;
  disposition: string | null;
  /** SIP Call-ID of the call's dialog (migration 0303); null for simulations. */
  sip_call_id: string | null;
  /** SIP facts of the call (migration 0331): transport, far end's signalling address, SDP codec. */
  sip_transport: string | null;
  sip_remote_address: string | null;
  codec: string | null;
  /** Answering-machine verdict of a screened outbound call (migration 0301). */
  amd_verdict: 'human' | 'machine' | 'unknown' | null;
  /** Caller audio heard until that verdict. */
  amd_ms: number | null;
  variables: JsonColumnWithDefault;
  recording_ref: string | null;
  analysis_status: 'pending' | 'analyzing' | 'completed' | 'failed' | 'skipped';
  analysis_error: string | null;
  analysis_completed_at: NullableTimestamp;
  /** Parameter name -> typed value (null when the transcript did not say). */
  insights: ColumnType<unknown, string | null | undefined, string | null>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface CallTranscriptsTable {
  call_id: string;
  entries: JsonColumn;
  /** The recipe's path: CallStep[] (migration 0310). */
  steps: JsonColumnWithDefault;
}

/** Durable post-call jobs (migration 0300, control-api/features/insights). */
export interface AnalysisJobsTable {
  id: Generated<string>;
  call_id: string;
  tenant_id: string;
  kind: 'extract' | 'deliver';
  state: 'pending' | 'running' | 'done' | 'failed' | 'skipped';
  payload: JsonColumnWithDefault;
  attempts: Generated<number>;
  run_at: Timestamp;
  deadline_at: Timestamp;
  locked_by: string | null;
  lease_until: NullableTimestamp;
  last_error: string | null;
  last_status: number | null;
  created_at: Generated<Date>;
  finished_at: NullableTimestamp;
}

/** A recording kept in the database (migration 0321, control-api/features/calls/database-recordings.ts). */
/** One gateway node's registration of a trunk (migration 0400). */
export interface SipTrunkRegistrationsTable {
  trunk_id: string;
  tenant_id: string;
  contact: string;
  state: string;
  expires_at: NullableTimestamp;
  retry_at: NullableTimestamp;
  last_error: string | null;
  updated_at: Timestamp;
}

export interface CallRecordingsTable {
  ref: string;
  size: ColumnType<bigint, bigint | number, bigint | number>;
  chunk_bytes: number;
  content_type: string;
  stored_at: Generated<Date>;
}

export interface CallRecordingChunksTable {
  ref: string;
  seq: number;
  data: Buffer | Uint8Array;
}

export interface Database {
  tenants: TenantsTable;
  api_tokens: ApiTokensTable;
  recipes: RecipesTable;
  business_hours_profiles: BusinessHoursProfilesTable;
  auth_profiles: AuthProfilesTable;
  pronunciation_entries: PronunciationEntriesTable;
  speech_profiles: SpeechProfilesTable;
  speech_profile_favourites: SpeechProfileFavouritesTable;
  knowledge_documents: KnowledgeDocumentsTable;
  sip_trunks: SipTrunksTable;
  sip_trunk_registrations: SipTrunkRegistrationsTable;
  phone_numbers: PhoneNumbersTable;
  campaigns: CampaignsTable;
  plants: PlantsTable;
  calls: CallsTable;
  call_transcripts: CallTranscriptsTable;
  call_recordings: CallRecordingsTable;
  call_recording_chunks: CallRecordingChunksTable;
  analysis_jobs: AnalysisJobsTable;
  campaign_messages: CampaignMessagesTable;
  campaign_attempts: CampaignAttemptsTable;
  campaign_callbacks: CampaignCallbacksTable;
}
