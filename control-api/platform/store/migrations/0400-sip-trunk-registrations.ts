import { sql, type Kysely } from 'kysely';

/**
 * How each gateway node's registration of a trunk with its carrier stands (RFC 3261 sec. 10.2),
 * written by the node that registers and read by the management API and the dashboard, which may
 * run in another process. One row per trunk and Contact (a node registers its own Contact); rows
 * go with their trunk.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sip_trunk_registrations')
    .addColumn('trunk_id', 'uuid', (c) => c.notNull().references('sip_trunks.id').onDelete('cascade'))
    .addColumn('tenant_id', 'uuid', (c) => c.notNull())
    .addColumn('contact', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz')
    .addColumn('retry_at', 'timestamptz')
    .addColumn('last_error', 'text')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('sip_trunk_registrations_pkey', ['trunk_id', 'contact'])
    .execute();
  await db.schema.createIndex('sip_trunk_registrations_tenant_idx').on('sip_trunk_registrations').column('tenant_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sip_trunk_registrations').execute();
}
