import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Plants belong to a token owner: `tenant:<uuid>` for issued tokens, `static:<digest>` for tokens
  // from configuration. Ids are chosen by the client (int64), so they are unique per owner only.
  // tenant_id is set for tenant owners so deleting a tenant deletes its plants.
  await db.schema
    .createTable('plants')
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('id', 'int8', (c) => c.notNull())
    .addColumn('tenant_id', 'uuid', (c) => c.references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('tag', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('plants_pkey', ['owner', 'id'])
    .execute();
  await db.schema.createIndex('plants_tenant_idx').on('plants').column('tenant_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('plants').execute();
}
