import { sql } from 'kysely';
import type { SecretBox } from '../../../platform/crypto/secret-box.js';
import { businessHoursSchema, type BusinessHoursSpec } from '../../domain/business-hours.js';
import { defineKind } from './define-kind.js';
import { namesWhere, targets } from './references.js';

export function businessHoursDefinition(box: SecretBox) {
  return defineKind<BusinessHoursSpec>(targets.businessHours, box, {
    schema: businessHoursSchema,
    naturalKey: (spec) => spec.name,
    async usedBy(db, tenantId, _id, name) {
      const campaigns = await namesWhere(db, 'campaigns', 'name', tenantId, sql`spec->'workingWindow'->>'profile' = ${name}`);
      return campaigns.map((c) => `campaign '${c}'`);
    },
  });
}
