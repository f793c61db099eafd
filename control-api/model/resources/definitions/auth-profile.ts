import { sql } from 'kysely';
import type { SecretBox } from '../../../platform/crypto/secret-box.js';
import { authProfileSchema, authProfileSecretPaths, type AuthProfileSpec } from '../../domain/auth-profile.js';
import { defineKind } from './define-kind.js';
import { namesWhere, targets } from './references.js';

const requiredByScheme: Readonly<Record<AuthProfileSpec['auth']['scheme'], readonly string[]>> = {
  basic: ['auth.password'],
  bearer: ['auth.token'],
  apiKey: ['auth.value'],
};

export function authProfileDefinition(box: SecretBox) {
  return defineKind<AuthProfileSpec>(targets.authProfile, box, {
    schema: authProfileSchema,
    naturalKey: (spec) => spec.name,
    secretPaths: authProfileSecretPaths,
    requiredSecrets: (spec) => requiredByScheme[spec.auth.scheme],
    async usedBy(db, tenantId, _id, name) {
      const recipes = await namesWhere(
        db,
        'recipes',
        'name',
        tenantId,
        sql`jsonb_path_exists(spec, '$.blocks[*].settings.authProfile ? (@ == $name)', jsonb_build_object('name', ${name}::text))`,
      );
      return recipes.map((r) => `recipe '${r}'`);
    },
  });
}
