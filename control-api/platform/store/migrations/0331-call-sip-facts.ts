import { type Kysely } from 'kysely';

/**
 * The SIP facts of a call beside its Call-ID (0303) and final status: the transport it came or
 * went over (udp, tcp, tls, ws, wss), the far end's signalling address, and the audio codec
 * negotiated in SDP (e.g. PCMU), so the call page shows what a SIP trace would. Null for
 * simulations, provider-carried calls and records written before this column.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('calls').addColumn('sip_transport', 'text').addColumn('sip_remote_address', 'text').addColumn('codec', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('calls').dropColumn('sip_transport').dropColumn('sip_remote_address').dropColumn('codec').execute();
}
