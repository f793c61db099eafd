import type { Kysely } from 'kysely';
import { notFound } from '../../../core/errors.js';
import { noteTenant } from '../../platform/http/request-log.js';
import type { Database } from '../../platform/store/schema.js';
import { reaches, type Principal } from './auth.js';

export interface TenantRef {
  readonly id: string;
  readonly clientId: string;
}

/**
 * The tenant a path names, if the caller may reach it. Another tenant's path answers exactly as a
 * missing tenant does (404), so a tenant token cannot even learn which client IDs exist. With the
 * request's context, the tenant goes on its access log line.
 */
export async function tenantInScope(db: Kysely<Database>, principal: Principal, clientId: string, ctx?: { state: unknown }): Promise<TenantRef> {
  const row = await db.selectFrom('tenants').select(['id', 'client_id']).where('client_id', '=', clientId).executeTakeFirst();
  if (!row || !reaches(principal, row.id)) throw notFound(`tenant "${clientId}"`);
  if (ctx) noteTenant(ctx, row.id);
  return { id: row.id, clientId: row.client_id };
}
