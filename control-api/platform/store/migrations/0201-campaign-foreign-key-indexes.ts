import { sql, type Kysely } from 'kysely';

/**
 * Deleting campaign messages (a campaign or tenant deleted, ON DELETE CASCADE) looked up each
 * message's callbacks with a scan of the whole outbox: 46,000 messages took minutes. The message
 * index by campaign also covers the (tenant, campaign) foreign key now, at no extra write cost.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX campaign_callbacks_message_idx ON campaign_callbacks (message_id)`.execute(db);
  await sql`DROP INDEX campaign_messages_campaign_idx`.execute(db);
  await sql`CREATE INDEX campaign_messages_campaign_idx ON campaign_messages (campaign_id, tenant_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX campaign_callbacks_message_idx`.execute(db);
  await sql`DROP INDEX campaign_messages_campaign_idx`.execute(db);
  await sql`CREATE INDEX campaign_messages_campaign_idx ON campaign_messages (campaign_id)`.execute(db);
}
