import { sql } from 'kysely';
import { openStore, type Store } from '../../control-api/platform/store/database.js';
import { testPostgres } from '../helpers/postgres-cluster.js';

/**
 * A PostgreSQL database for a dashboard test's platform (`DATABASE_URL`), so the test can write
 * call history straight into `calls` while the platform serves it: a day-to-day call list needs
 * more calls than a test can place.
 */
export async function dashboardDatabase(): Promise<{ url: string; store: Store }> {
  const cluster = await testPostgres();
  const url = await cluster.createDatabase();
  return { url, store: await openStore({ url, poolSize: 2 }) };
}

/**
 * `count` ended calls of the tenant, one a minute from `first` (the newest is the last), each a
 * different duration; every 7th inbound, every 11th a web call, every 13th transferred, the
 * contact number `+9198000000<i % 10>`.
 */
export async function seedCalls(store: Store, clientId: string, count: number, first: Date): Promise<void> {
  const tenant = await store.db.selectFrom('tenants').select('id').where('client_id', '=', clientId).executeTakeFirstOrThrow();
  await sql`
    insert into calls (tenant_id, direction, phone_number, remote_number, started_at, answered_at, ended_at, status, outcome, sip_status,
                       duration_ms, end_reason, disposition, variables, analysis_status)
    select ${tenant.id}::uuid,
           case when g % 11 = 0 then 'web' when g % 7 = 0 then 'inbound' else 'outbound' end,
           '+914440001001', '+9198000000' || (g % 10),
           ${first}::timestamptz + (g - 1) * interval '1 minute',
           ${first}::timestamptz + (g - 1) * interval '1 minute',
           ${first}::timestamptz + (g - 1) * interval '1 minute' + ((g * 37) % 300) * interval '1 second',
           'ended', 'completed', 200, ((g * 37) % 300) * 1000,
           case when g % 13 = 0 then 'transferred' else 'closed' end,
           case when g % 13 = 0 then 'to_desk' else 'promise_to_pay' end,
           jsonb_build_object('seq', g), 'skipped'
    from generate_series(1, ${count}::int) g`.execute(store.db);
}

/** One call with everything the call page shows: variables, a keyed turn, SIP facts, a transfer. */
export async function seedDetailedCall(store: Store, clientId: string, at: Date): Promise<string> {
  const tenant = await store.db.selectFrom('tenants').select('id').where('client_id', '=', clientId).executeTakeFirstOrThrow();
  const row = await store.db
    .insertInto('calls')
    .values({
      tenant_id: tenant.id,
      direction: 'inbound',
      phone_number: '+914440001001',
      remote_number: '+919812345678',
      started_at: at,
      answered_at: at,
      ended_at: new Date(at.getTime() + 42_000),
      status: 'ended',
      outcome: 'completed',
      sip_status: 200,
      duration_ms: 42_000,
      end_reason: 'transferred',
      disposition: null,
      variables: JSON.stringify({ order_number: '123456' }),
      sip_call_id: 'a84b4c76e66710@pc33.example.com',
      sip_transport: 'udp',
      sip_remote_address: '192.0.2.10',
      codec: 'PCMA',
      analysis_status: 'skipped',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const t = at.getTime();
  await store.db
    .insertInto('call_transcripts')
    .values({
      call_id: row.id,
      entries: JSON.stringify([
        { at: t + 1000, speaker: 'agent', text: 'Please key in your order number.', blockId: 'ask_order' },
        { at: t + 9000, speaker: 'caller', text: '123456', blockId: 'ask_order', dtmf: true },
        { at: t + 11000, speaker: 'agent', text: 'Connecting you to our desk.', blockId: 'to_desk' },
      ]),
      steps: JSON.stringify([
        { blockId: 'ask_order', type: 'ask', exit: 'next', turns: [] },
        // How the run saw it: the caller's leg went away once the transfer took it.
        { blockId: 'to_desk', type: 'transfer', end: 'callerHangup', turns: [] },
      ]),
    })
    .execute();
  return row.id;
}
