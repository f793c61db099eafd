import { sql, type Transaction } from 'kysely';
import type { OriginateOutcome } from '../../../core/ports/originator.js';
import type { CallOutcome } from '../calls/call-types.js';
import type { Database } from '../../platform/store/schema.js';

type UnansweredOutcome = Exclude<OriginateOutcome, 'answered'>;

/** The call record's outcome for an attempt's (the call API spells `no-answer` as `no_answer`). */
const callOutcome: Readonly<Record<UnansweredOutcome, CallOutcome>> = { busy: 'busy', 'no-answer': 'no_answer', failed: 'failed' };

/**
 * Writes the call records of campaign attempts that never connected (busy, no answer, failed,
 * refused by the trunk, or lost with their worker), inside the transaction that settles them:
 * the record exists exactly when the outcome does. An answered attempt is recorded by the gateway
 * (RecipeCallHandler) instead. Everything but the outcome is read from the attempt, its message
 * and the number it was dialled from, so the lease-recovery path needs nothing in memory. There is
 * nothing to transcribe, record or analyse: analysis is `skipped` and no transcript row is written
 * (the API shows an empty transcript). The unique (message_id, attempt) index makes a second
 * settlement of the same attempt a no-op here as it is for the attempt row.
 */
export async function recordUnconnectedCalls(
  trx: Transaction<Database>,
  attempts: ReadonlyArray<{ readonly message: { readonly id: string }; readonly attemptNo: number; readonly outcome: UnansweredOutcome; readonly sipCallId?: string }>,
  now: number,
): Promise<void> {
  if (attempts.length === 0) return;
  // The INVITE's Call-ID is known in memory only (none after a lease recovery: null then).
  const values = sql.join(attempts.map((a) => sql`(${a.message.id}::uuid, ${a.attemptNo}::int, ${callOutcome[a.outcome]}::text, ${a.sipCallId ?? null}::text)`));
  await sql`
    INSERT INTO calls (tenant_id, direction, phone_number_id, phone_number, remote_number, campaign_id, message_id, attempt, recipe_id,
      language, started_at, ended_at, status, outcome, sip_status, duration_ms, end_reason, variables, analysis_status, updated_at, sip_call_id)
    SELECT m.tenant_id, 'outbound', n.id, a.from_e164, m.to_e164, m.campaign_id, m.id, a.attempt_no, c.recipe_id,
      n.spec ->> 'language', a.started_at, GREATEST(a.started_at, ${new Date(now)}::timestamptz), 'ended', v.outcome, a.sip_status, 0, v.outcome,
      m.variables, 'skipped', ${new Date(now)}::timestamptz, v.sip_call_id
    FROM (VALUES ${values}) AS v(message_id, attempt_no, outcome, sip_call_id)
    JOIN campaign_attempts a ON a.message_id = v.message_id AND a.attempt_no = v.attempt_no
    JOIN campaign_messages m ON m.id = a.message_id
    LEFT JOIN campaigns c ON c.id = m.campaign_id AND c.tenant_id = m.tenant_id
    LEFT JOIN phone_numbers n ON n.e164 = a.from_e164 AND n.tenant_id = m.tenant_id
    ON CONFLICT (message_id, attempt) WHERE attempt IS NOT NULL DO NOTHING`.execute(trx);
}
