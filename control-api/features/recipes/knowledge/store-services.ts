import type { Kysely } from 'kysely';
import type { SecretBox } from '../../../platform/crypto/secret-box.js';
import { authProfileDefinition } from '../../../model/resources/definitions/auth-profile.js';
import type { Database } from '../../../platform/store/schema.js';
import type { AuthProfile, AuthProfileResolver } from '../runtime/services.js';

/** Auth profiles from the domain tables, secrets opened only here, at the moment of the call. */
export class StoreAuthProfileResolver implements AuthProfileResolver {
  private readonly definition;

  constructor(private readonly db: Kysely<Database>, box: SecretBox) {
    this.definition = authProfileDefinition(box);
  }

  async resolve(tenantId: string, name: string): Promise<AuthProfile | undefined> {
    const stored = await this.definition.repository.findWithSecrets(this.db, tenantId, name);
    const auth = stored?.spec.auth;
    if (!auth) return undefined;
    switch (auth.scheme) {
      case 'basic':
        return auth.password === undefined ? undefined : { type: 'basic', username: auth.username, password: auth.password };
      case 'bearer':
        return auth.token === undefined ? undefined : { type: 'bearer', token: auth.token };
      case 'apiKey':
        return auth.value === undefined ? undefined : { type: 'apiKey', in: auth.in, name: auth.name, value: auth.value };
    }
  }
}

/** The tenant's SSRF allowlist (tenant settings `ssrfAllowlist`), for SafeHttp. */
export function tenantAllowlist(db: Kysely<Database>): (tenantId: string) => Promise<readonly string[]> {
  return async (tenantId) => {
    const row = await db.selectFrom('tenants').select('settings').where('id', '=', tenantId).executeTakeFirst();
    const list = (row?.settings as { ssrfAllowlist?: unknown } | undefined)?.ssrfAllowlist;
    return Array.isArray(list) ? list.filter((e): e is string => typeof e === 'string') : [];
  };
}
