import { sql, type CreateTableBuilder, type Kysely } from 'kysely';

/**
 * Tenant-scoped resources of the domain model. Hybrid rows: real columns for keys, references
 * and whatever the gateway and scheduler query (E.164, enabled, trunk addresses, DIDs,
 * extension); the validated spec as jsonb (secrets inside it sealed, see control-api/platform/crypto).
 *
 * References that must never dangle are foreign keys on (tenant_id, id), so a row can only point
 * at a row of its own tenant. They use NO ACTION rather than RESTRICT: both refuse deleting a
 * recipe in use, but NO ACTION is checked at the end of the statement, so deleting a whole tenant
 * (which cascades to numbers and recipes together) still works.
 */

type Builder = CreateTableBuilder<string, string>;

function resourceTable(db: Kysely<unknown>, table: string, keyColumn: string, extra: (t: Builder) => Builder = (t) => t) {
  const base = db.schema
    .createTable(table)
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn(keyColumn, 'text', (c) => c.notNull());
  return extra(base)
    .addColumn('spec', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint(`${table}_tenant_key`, ['tenant_id', keyColumn])
    .addUniqueConstraint(`${table}_tenant_id_key`, ['tenant_id', 'id']);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('tenants')
    .addColumn('settings', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();

  await resourceTable(db, 'recipes', 'name').execute();
  await resourceTable(db, 'business_hours_profiles', 'name').execute();
  await resourceTable(db, 'auth_profiles', 'name').execute();
  await resourceTable(db, 'pronunciation_entries', 'word').execute();
  await resourceTable(db, 'speech_profiles', 'name', (t) =>
    t
      .addColumn('language', 'text', (c) => c.notNull())
      .addColumn('gender', 'text', (c) => c.notNull())
      .addColumn('favourite', 'boolean', (c) => c.notNull().defaultTo(false)),
  ).execute();
  await resourceTable(db, 'knowledge_documents', 'name', (t) => t.addColumn('tags', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))).execute();

  // The extension is a platform-wide fallback identifier of a tenant, so it is unique globally.
  await resourceTable(db, 'sip_trunks', 'name', (t) =>
    t
      .addColumn('termination_addresses', sql`text[]`, (c) => c.notNull())
      .addColumn('dids', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
      .addColumn('extension', 'text', (c) => c.unique()),
  ).execute();
  await db.schema.createIndex('sip_trunks_addresses_idx').on('sip_trunks').using('gin').column('termination_addresses').execute();
  await db.schema.createIndex('sip_trunks_dids_idx').on('sip_trunks').using('gin').column('dids').execute();

  // A number rings one tenant: E.164 is unique across the platform, not only per tenant.
  await resourceTable(db, 'phone_numbers', 'e164', (t) =>
    t
      .addColumn('recipe_id', 'uuid', (c) => c.notNull())
      .addColumn('sip_trunk_id', 'uuid')
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('enabled', 'boolean', (c) => c.notNull())
      .addUniqueConstraint('phone_numbers_e164_key', ['e164'])
      .addForeignKeyConstraint('phone_numbers_recipe_fk', ['tenant_id', 'recipe_id'], 'recipes', ['tenant_id', 'id'])
      .addForeignKeyConstraint('phone_numbers_trunk_fk', ['tenant_id', 'sip_trunk_id'], 'sip_trunks', ['tenant_id', 'id']),
  ).execute();

  await resourceTable(db, 'campaigns', 'name', (t) =>
    t
      .addColumn('recipe_id', 'uuid', (c) => c.notNull())
      .addColumn('phone_number_id', 'uuid', (c) => c.notNull())
      .addColumn('published', 'boolean', (c) => c.notNull())
      .addForeignKeyConstraint('campaigns_recipe_fk', ['tenant_id', 'recipe_id'], 'recipes', ['tenant_id', 'id'])
      .addForeignKeyConstraint('campaigns_number_fk', ['tenant_id', 'phone_number_id'], 'phone_numbers', ['tenant_id', 'id']),
  ).execute();
  await db.schema.createIndex('phone_numbers_recipe_idx').on('phone_numbers').column('recipe_id').execute();
  await db.schema.createIndex('campaigns_recipe_idx').on('campaigns').column('recipe_id').execute();
  await db.schema.createIndex('campaigns_number_idx').on('campaigns').column('phone_number_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'campaigns',
    'phone_numbers',
    'sip_trunks',
    'knowledge_documents',
    'speech_profiles',
    'pronunciation_entries',
    'auth_profiles',
    'business_hours_profiles',
    'recipes',
  ]) {
    await db.schema.dropTable(table).execute();
  }
  await db.schema.alterTable('tenants').dropColumn('settings').execute();
}
