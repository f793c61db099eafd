import { sql, type Kysely } from 'kysely';

/**
 * Stars on the platform's built-in speech profiles. The built-ins are shared by every tenant and
 * live in code (domain/builtin-speech-profiles.ts), so a tenant's star cannot sit in their spec:
 * it is one row per (tenant, built-in id). A custom profile keeps its star in its own spec.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('speech_profile_favourites')
    .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('profile_id', 'uuid', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('speech_profile_favourites_pkey', ['tenant_id', 'profile_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('speech_profile_favourites').execute();
}
