import { sql } from 'kysely';
import type { SecretBox } from '../../../platform/crypto/secret-box.js';
import { pronunciationEntrySchema, type PronunciationEntrySpec } from '../../domain/pronunciation-entry.js';
import { defineKind } from './define-kind.js';
import { namesWhere, requireSpeechProfile, targets } from './references.js';

export function pronunciationEntryDefinition(box: SecretBox) {
  return defineKind<PronunciationEntrySpec>(targets.pronunciationEntry, box, {
    schema: pronunciationEntrySchema,
    naturalKey: (spec) => spec.word,
    async columns(db, tenantId, spec) {
      for (const [index, name] of spec.speechProfiles.entries()) {
        await requireSpeechProfile(db, tenantId, name, `speechProfiles[${index}]`);
      }
      return {};
    },
    async usedBy(db, tenantId, _id, word) {
      const numbers = await namesWhere(db, 'phone_numbers', 'e164', tenantId, sql`spec->'pronunciationWords' @> jsonb_build_array(${word}::text)`);
      return numbers.map((n) => `phone number ${n}`);
    },
  });
}
