import { sql, type Kysely } from 'kysely';

/**
 * Indexes on the referencing side of the domain's composite foreign keys, so that deleting or
 * renaming a recipe, number or trunk checks its users through an index instead of a table scan
 * (test/store/foreign-key-indexes.test.ts keeps every foreign key covered).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX campaigns_number_fk_idx ON campaigns (phone_number_id, tenant_id)`.execute(db);
  await sql`CREATE INDEX campaigns_recipe_fk_idx ON campaigns (recipe_id, tenant_id)`.execute(db);
  await sql`CREATE INDEX phone_numbers_recipe_fk_idx ON phone_numbers (recipe_id, tenant_id)`.execute(db);
  await sql`CREATE INDEX phone_numbers_trunk_fk_idx ON phone_numbers (sip_trunk_id, tenant_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of ['campaigns_number_fk_idx', 'campaigns_recipe_fk_idx', 'phone_numbers_recipe_fk_idx', 'phone_numbers_trunk_fk_idx']) {
    await sql`DROP INDEX ${sql.id(name)}`.execute(db);
  }
}
