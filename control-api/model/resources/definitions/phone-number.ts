import { sql } from 'kysely';
import type { SecretBox } from '../../../platform/crypto/secret-box.js';
import { phoneNumberSchema, phoneNumberSecretPaths, type PhoneNumberSpec } from '../../domain/phone-number.js';
import { defineKind } from './define-kind.js';
import { namesWhere, requireRef, requireSpeechProfile, targets } from './references.js';

const requiredSecretsByProvider: Readonly<Record<PhoneNumberSpec['provider']['type'], readonly string[]>> = {
  providerA: ['provider.authToken'],
  providerB: ['provider.apiKey', 'provider.apiToken'],
  providerC: ['provider.apiToken', 'provider.apiKey'],
  nativeStack: [],
  customSipTrunk: [],
};

export function phoneNumberDefinition(box: SecretBox) {
  return defineKind<PhoneNumberSpec>(targets.phoneNumber, box, {
    schema: phoneNumberSchema,
    naturalKey: (spec) => spec.number,
    secretPaths: phoneNumberSecretPaths,
    requiredSecrets: (spec) => requiredSecretsByProvider[spec.provider.type],
    uniqueMessages: {
      phone_numbers_e164_key: (spec) => `phone number ${spec.number} is already provisioned`,
      phone_numbers_tenant_key: (spec) => `phone number ${spec.number} is already provisioned`,
    },
    async columns(db, tenantId, spec) {
      const recipeId = await requireRef(db, targets.recipe, tenantId, spec.recipe, 'recipe');
      const trunkId =
        spec.provider.type === 'customSipTrunk' ? await requireRef(db, targets.sipTrunk, tenantId, spec.provider.trunk, 'provider.trunk') : null;
      if (spec.voice) await requireSpeechProfile(db, tenantId, spec.voice, 'voice');
      for (const [index, word] of spec.pronunciationWords.entries()) {
        await requireRef(db, targets.pronunciationEntry, tenantId, word, `pronunciationWords[${index}]`);
      }
      return { recipe_id: recipeId, sip_trunk_id: trunkId, provider: spec.provider.type, enabled: spec.enabled };
    },
    async usedBy(db, tenantId, id) {
      const campaigns = await namesWhere(db, 'campaigns', 'name', tenantId, sql`phone_number_id = ${id}`);
      return campaigns.map((c) => `campaign '${c}'`);
    },
  });
}
