import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../platform/store/schema.js';
import { requestHash, scheduledCallbackBody, type AcceptedMessage } from './accept-message.js';
import { GroupCommit } from './group-commit.js';
import type { SendMessageRequest } from './send-message-request.js';

/**
 * The fast path of SendMessage: concurrent requests are stored together by one multi-row
 * statement (group commit), and each is answered only after that statement committed, so a 200
 * still means "durably stored" exactly as with a statement per request.
 *
 * The caller's tenant and token come from a short-lived cache (caller-cache.ts), so the
 * statement re-checks everything it relies on, as of its own snapshot: the tenant still has the
 * timezone the request was parsed with, the token still exists unrevoked, unexpired and with the
 * `campaign` scope, and the campaign belongs to the tenant and is published. A row that fails a
 * check, or whose Idempotency-Key is taken, is simply not inserted; the handler then runs the
 * full per-request path (fresh lookups, precise error, idempotent replay), so every answer other
 * than a fresh insert is exactly what that path gives.
 */
export interface IntakeItem {
  readonly tenantId: string;
  /** SHA-256 hex of the presented token (api_tokens.token_hash). */
  readonly tokenHash: string;
  /** The tenant timezone the request was parsed with. */
  readonly timezone: string;
  readonly request: SendMessageRequest;
  readonly idempotencyKey?: string;
  readonly now: number;
}

/** `undefined`: not stored here; take the per-request path. */
export type IntakeResult = AcceptedMessage | undefined;

export interface MessageIntakeOptions {
  readonly db: Kysely<Database>;
  /** Requests per statement; default 200 (17 parameters each). */
  readonly maxBatch?: number;
  /** Statements in flight at once; default 2. */
  readonly maxConcurrent?: number;
  /** After each commit, with the messages it created (to make the scheduler's job fire when due). */
  readonly onStored?: (created: ReadonlyArray<{ messageId: string; dueAt: number }>) => Promise<void>;
}

interface Row {
  readonly id: string;
  readonly dueAt: number;
  readonly item: IntakeItem;
}

export class MessageIntake {
  private readonly group: GroupCommit<IntakeItem, IntakeResult>;

  constructor(private readonly options: MessageIntakeOptions) {
    this.group = new GroupCommit({ flush: (items) => this.store(items), maxBatch: options.maxBatch ?? 200, maxConcurrent: options.maxConcurrent ?? 2 });
  }

  submit(item: IntakeItem): Promise<IntakeResult> {
    return this.group.submit(item);
  }

  private async store(items: readonly IntakeItem[]): Promise<IntakeResult[]> {
    const rows: Row[] = items.map((item) => ({ id: randomUUID(), dueAt: Math.max(item.request.scheduledAt, item.now), item }));
    const values = sql.join(
      rows.map(({ id, dueAt, item }) => {
        const { request, tenantId, now } = item;
        const callbackUrl = request.callback?.url ?? null;
        const body = callbackUrl ? JSON.stringify(scheduledCallbackBody(id, tenantId, request, dueAt, now)) : null;
        return sql`(${id}::uuid, ${tenantId}::uuid, ${item.tokenHash}::text, ${item.timezone}::text, ${request.campaignId}::uuid, ${request.to}::text,
          ${JSON.stringify(request.variables)}::jsonb, ${callbackUrl}::text, ${request.callback?.state !== undefined ? JSON.stringify(request.callback.state) : null}::jsonb,
          ${new Date(request.scheduledAt)}::timestamptz, ${request.bypassCallingWindow}::boolean, ${item.idempotencyKey ?? null}::text, ${requestHash(request)}::text,
          ${new Date(dueAt)}::timestamptz, ${callbackUrl ? 1 : 0}::int, ${body}::text, ${new Date(now)}::timestamptz)`;
      }),
    );
    // Data-modifying CTEs run as one statement: the message rows and their `scheduled` callbacks
    // commit together, for the whole group, or not at all.
    let inserted: Array<{ id: string }>;
    try {
      inserted = await this.insert(values);
    } catch (error) {
      // The server refused the statement (so nothing of it was stored), e.g. one request's value
      // that PostgreSQL rejects (a NUL in a JSON string): each request then takes the per-request
      // path, where only the offending one fails, as it did before grouping. A connection error
      // may have lost the commit's answer, so it fails the group rather than risk a second copy.
      if (serverRefused(error)) return rows.map(() => undefined);
      throw error;
    }
    const stored = new Set(inserted.map((r) => r.id));
    const created = rows.filter((r) => stored.has(r.id));
    if (created.length > 0) await this.options.onStored?.(created.map((r) => ({ messageId: r.id, dueAt: r.dueAt })));
    return rows.map((r) => (stored.has(r.id) ? { messageId: r.id, dueAt: r.dueAt, created: true } : undefined));
  }

  private async insert(values: RawBuilder<unknown>): Promise<Array<{ id: string }>> {
    const { rows } = await sql<{ id: string }>`
      WITH v (id, tenant_id, token_hash, timezone, campaign_id, to_e164, variables, callback_url, callback_state, requested_at,
              bypass_window, idempotency_key, request_hash, next_attempt_at, callback_seq, callback_body, now) AS (VALUES ${values}),
      ok AS (
        SELECT v.* FROM v
        JOIN tenants t ON t.id = v.tenant_id AND t.timezone = v.timezone
        JOIN api_tokens k ON k.tenant_id = v.tenant_id AND k.token_hash = v.token_hash AND k.revoked_at IS NULL
          AND (k.expires_at IS NULL OR k.expires_at > v.now) AND 'campaign' = ANY (k.scopes)
        JOIN campaigns c ON c.id = v.campaign_id AND c.tenant_id = v.tenant_id AND c.published
      ),
      m AS (
        INSERT INTO campaign_messages
          (id, tenant_id, campaign_id, to_e164, variables, callback_url, callback_state, requested_at, bypass_window,
           idempotency_key, request_hash, status, next_attempt_at, callback_seq)
        SELECT id, tenant_id, campaign_id, to_e164, variables, callback_url, callback_state, requested_at, bypass_window,
           idempotency_key, request_hash, 'scheduled', next_attempt_at, callback_seq FROM ok
        ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
        RETURNING id
      ),
      c AS (
        INSERT INTO campaign_callbacks (message_id, tenant_id, url, body, next_try_at)
        SELECT ok.id, ok.tenant_id, ok.callback_url, ok.callback_body, ok.now FROM ok JOIN m ON m.id = ok.id WHERE ok.callback_body IS NOT NULL
      )
      SELECT id FROM m`.execute(this.options.db);
    return rows;
  }
}

/** A SQLSTATE error from the server, other than a connection exception (class 08). */
function serverRefused(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08');
}
