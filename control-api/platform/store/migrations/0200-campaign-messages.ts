import { sql, type Kysely } from 'kysely';

/**
 * Campaign SendMessage requests and their call attempts: the scheduler's source of truth.
 * Job queues (Agenda on PostgreSQL, the store poller on PGlite) only say "look at message X now";
 * whether an attempt may be placed is decided here, under row locks, so a job run twice never
 * rings twice: an attempt is a unique (message_id, attempt_no) row inserted before dialing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE campaign_messages (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      campaign_id uuid NOT NULL,
      to_e164 text NOT NULL,
      variables jsonb NOT NULL DEFAULT '{}'::jsonb,
      callback_url text,
      callback_state jsonb,
      requested_at timestamptz NOT NULL,
      bypass_window boolean NOT NULL DEFAULT false,
      idempotency_key text,
      request_hash text NOT NULL,
      -- scheduled | calling | completed | discarded | failed | busy | no-answer
      status text NOT NULL,
      attempts_made integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      -- Why the message is waiting: 'initial' | 'retry' | 'window' | 'concurrency'.
      wait_reason text NOT NULL DEFAULT 'initial',
      callback_seq integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (tenant_id, campaign_id) REFERENCES campaigns(tenant_id, id) ON DELETE CASCADE
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX campaign_messages_idempotency_key ON campaign_messages (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL`.execute(db);
  await sql`CREATE INDEX campaign_messages_due_idx ON campaign_messages (next_attempt_at) WHERE status = 'scheduled'`.execute(db);
  await sql`CREATE INDEX campaign_messages_campaign_idx ON campaign_messages (campaign_id)`.execute(db);

  await sql`
    CREATE TABLE campaign_attempts (
      message_id uuid NOT NULL REFERENCES campaign_messages(id) ON DELETE CASCADE,
      attempt_no integer NOT NULL,
      campaign_id uuid NOT NULL,
      from_e164 text NOT NULL,
      -- dialing | ringing | answered | completed | busy | no-answer | failed
      status text NOT NULL,
      sip_status integer,
      reason text,
      worker_id text NOT NULL,
      lease_until timestamptz NOT NULL,
      started_at timestamptz NOT NULL,
      answered_at timestamptz,
      ended_at timestamptz,
      PRIMARY KEY (message_id, attempt_no)
    )`.execute(db);
  await sql`CREATE INDEX campaign_attempts_active_campaign_idx ON campaign_attempts (campaign_id) WHERE status IN ('dialing', 'ringing', 'answered')`.execute(db);
  await sql`CREATE INDEX campaign_attempts_active_from_idx ON campaign_attempts (from_e164) WHERE status IN ('dialing', 'ringing', 'answered')`.execute(db);
  await sql`CREATE INDEX campaign_attempts_lease_idx ON campaign_attempts (lease_until) WHERE status IN ('dialing', 'ringing', 'answered')`.execute(db);

  // Outbox of status callbacks, written in the same transaction as the state change they report.
  await sql`
    CREATE TABLE campaign_callbacks (
      id bigserial PRIMARY KEY,
      message_id uuid NOT NULL REFERENCES campaign_messages(id) ON DELETE CASCADE,
      tenant_id uuid NOT NULL,
      url text NOT NULL,
      body text NOT NULL,
      tries integer NOT NULL DEFAULT 0,
      next_try_at timestamptz NOT NULL,
      delivered_at timestamptz,
      given_up_at timestamptz,
      last_status integer,
      last_error text,
      claimed_until timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX campaign_callbacks_pending_idx ON campaign_callbacks (next_try_at) WHERE delivered_at IS NULL AND given_up_at IS NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE campaign_callbacks`.execute(db);
  await sql`DROP TABLE campaign_attempts`.execute(db);
  await sql`DROP TABLE campaign_messages`.execute(db);
}
