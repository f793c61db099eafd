import { sql, type Kysely, type Selectable } from 'kysely';
import type { Clock } from '../../../core/clock.js';
import type { CampaignMessagesTable, Database } from '../../platform/store/schema.js';
import { callbackBody, type CallbackEvent } from './callbacks.js';

/**
 * The steps of an attempt that do not end it, written in groups (a burst of calls must not cost
 * a transaction per call and step, which on embedded PGlite queues everything behind them,
 * outcomes included): `claimed` -> `dialing` right before the INVITE leaves, then `ringing` and
 * `answered`. Each change is guarded by the attempt's current status, as when written alone, so
 * late or repeated reports change nothing.
 */
type MessageRow = Selectable<CampaignMessagesTable>;

export interface AttemptKey {
  readonly messageId: string;
  readonly attemptNo: number;
}

/**
 * Records that attempts are about to send their INVITE (`claimed` -> `dialing`, lease renewed).
 * Only attempts still claimed by `workerId` change: one whose lease expired meanwhile may have
 * been released to another worker, which dials it instead. Returns, per attempt, whether it may
 * be dialled.
 */
export async function markDialing(db: Kysely<Database>, workerId: string, leaseUntil: Date, keys: readonly AttemptKey[]): Promise<boolean[]> {
  if (keys.length === 0) return [];
  const values = sql.join(keys.map((k) => sql`(${k.messageId}::uuid, ${k.attemptNo}::int)`));
  const { rows } = await sql<{ message_id: string; attempt_no: number }>`
    UPDATE campaign_attempts a SET status = 'dialing', lease_until = ${leaseUntil}
    FROM (VALUES ${values}) AS v(message_id, attempt_no)
    WHERE a.message_id = v.message_id AND a.attempt_no = v.attempt_no AND a.status = 'claimed' AND a.worker_id = ${workerId}
    RETURNING a.message_id, a.attempt_no`.execute(db);
  const marked = new Set(rows.map((r) => `${r.message_id}#${r.attempt_no}`));
  return keys.map((k) => marked.has(`${k.messageId}#${k.attemptNo}`));
}

export interface Progress {
  readonly message: MessageRow;
  readonly attemptNo: number;
  readonly status: 'ringing' | 'answered';
  readonly sipStatus?: number;
}

/** Statuses each step may follow. */
const follows: Readonly<Record<Progress['status'], readonly string[]>> = {
  ringing: ['claimed', 'dialing'],
  answered: ['claimed', 'dialing', 'ringing'],
};

/** Applies ringing / answered steps in one transaction, with their callbacks (next sequence numbers). */
export async function progressMany(db: Kysely<Database>, clock: Clock, items: readonly Progress[]): Promise<void> {
  if (items.length === 0) return;
  const now = clock.now();
  await db.transaction().execute(async (trx) => {
    // Message rows first, in id order: the lock order of every writer of a batch.
    const ids = [...new Set(items.map((i) => i.message.id))].sort();
    await trx.selectFrom('campaign_messages').select('id').where('id', 'in', ids).orderBy('id').forUpdate().execute();
    const values = sql.join(
      items.map((i) => sql`(${i.message.id}::uuid, ${i.attemptNo}::int, ${i.status}::text, ${i.sipStatus ?? null}::int, ${sql.raw(`ARRAY[${follows[i.status].map((s) => `'${s}'`).join(',')}]`)}::text[])`),
    );
    const { rows } = await sql<{ message_id: string; attempt_no: number; status: string }>`
      UPDATE campaign_attempts a SET status = v.status, sip_status = COALESCE(v.sip_status, a.sip_status),
        answered_at = CASE WHEN v.status = 'answered' THEN ${new Date(now)}::timestamptz ELSE a.answered_at END
      FROM (VALUES ${values}) AS v(message_id, attempt_no, status, sip_status, follows)
      WHERE a.message_id = v.message_id AND a.attempt_no = v.attempt_no AND a.status = ANY (v.follows)
      RETURNING a.message_id, a.attempt_no, a.status`.execute(trx);
    // One step per attempt per group: the scheduler submits an attempt's next step only after
    // the previous one was written (an UPDATE applies one source row per target row).
    const changed = new Set(rows.map((r) => `${r.message_id}#${r.attempt_no}`));
    const events = items.filter((i) => i.message.callback_url && changed.has(`${i.message.id}#${i.attemptNo}`));
    if (events.length === 0) return;
    const perMessage = new Map<string, number>();
    for (const e of events) perMessage.set(e.message.id, (perMessage.get(e.message.id) ?? 0) + 1);
    const counts = sql.join([...perMessage].map(([id, n]) => sql`(${id}::uuid, ${n}::int)`));
    const { rows: seqs } = await sql<{ id: string; callback_seq: number }>`
      UPDATE campaign_messages m SET callback_seq = m.callback_seq + v.n FROM (VALUES ${counts}) AS v(id, n) WHERE m.id = v.id
      RETURNING m.id, m.callback_seq`.execute(trx);
    const next = new Map(seqs.map((r) => [r.id, Number(r.callback_seq) - (perMessage.get(r.id) ?? 0)]));
    const callbacks = events.map((e) => {
      const sequence = (next.get(e.message.id) ?? 0) + 1;
      next.set(e.message.id, sequence);
      const event: CallbackEvent = { status: e.status, attempt: e.attemptNo, final: false, ...(e.sipStatus !== undefined ? { sipStatus: e.sipStatus } : {}) };
      return { message_id: e.message.id, tenant_id: e.message.tenant_id, url: e.message.callback_url!, body: JSON.stringify(callbackBody(e.message, event, sequence, now)), next_try_at: new Date(now) };
    });
    for (let i = 0; i < callbacks.length; i += 500) await trx.insertInto('campaign_callbacks').values(callbacks.slice(i, i + 500)).execute();
  });
}
