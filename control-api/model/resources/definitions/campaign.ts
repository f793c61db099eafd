import type { SecretBox } from '../../../platform/crypto/secret-box.js';
import { campaignSchema, type CampaignSpec } from '../../domain/campaign.js';
import { defineKind } from './define-kind.js';
import { requireRef, targets } from './references.js';

export function campaignDefinition(box: SecretBox) {
  return defineKind<CampaignSpec>(targets.campaign, box, {
    schema: campaignSchema,
    naturalKey: (spec) => spec.name,
    async columns(db, tenantId, spec) {
      const recipeId = await requireRef(db, targets.recipe, tenantId, spec.recipe, 'recipe');
      const numberId = await requireRef(db, targets.phoneNumber, tenantId, spec.phoneNumber, 'phoneNumber');
      if (spec.workingWindow.profile && spec.workingWindow.enabled && spec.workingWindow.mode === 'businessHours') {
        await requireRef(db, targets.businessHours, tenantId, spec.workingWindow.profile, 'workingWindow.profile');
      }
      return { recipe_id: recipeId, phone_number_id: numberId, published: spec.published };
    },
  });
}

