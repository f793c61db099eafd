import { sql } from 'kysely';
import type { SecretBox } from '../../../platform/crypto/secret-box.js';
import { validRecipeSchema } from '../../recipes/recipe-graph.js';
import type { Recipe } from '../../recipes/recipe-schema.js';
import { defineKind } from './define-kind.js';
import { namesWhere, requireRef, targets } from './references.js';

export function recipeDefinition(box: SecretBox) {
  return defineKind<Recipe>(targets.recipe, box, {
    schema: validRecipeSchema,
    naturalKey: (spec) => spec.name,
    async columns(db, tenantId, spec) {
      // API blocks name their auth profile; it must exist when the recipe is saved.
      for (const [index, block] of spec.blocks.entries()) {
        if (block.type === 'api' && block.settings.authProfile) {
          await requireRef(db, targets.authProfile, tenantId, block.settings.authProfile, `blocks[${index}].settings.authProfile`);
        }
      }
      return {};
    },
    async usedBy(db, tenantId, id) {
      const numbers = await namesWhere(db, 'phone_numbers', 'e164', tenantId, sql`recipe_id = ${id}`);
      const campaigns = await namesWhere(db, 'campaigns', 'name', tenantId, sql`recipe_id = ${id}`);
      return [...numbers.map((n) => `phone number ${n}`), ...campaigns.map((c) => `campaign '${c}'`)];
    },
  });
}
