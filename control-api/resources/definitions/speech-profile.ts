import { sql } from 'kysely';
import type { SecretBox } from '../../crypto/secret-box.js';
import { speechProfileSchema, type SpeechProfileSpec } from '../../domain/speech-profile.js';
import { defineKind } from './define-kind.js';
import { namesWhere } from './references.js';

export function speechProfileDefinition(box: SecretBox) {
  return defineKind<SpeechProfileSpec>(
    'speech-profiles',
    {
      kind: 'SpeechProfile',
      noun: 'speech profile',
      table: 'speech_profiles',
      keyColumn: 'name',
      schema: speechProfileSchema,
      naturalKey: (spec) => spec.name,
      async columns(_db, _tenantId, spec) {
        return { language: spec.language, gender: spec.gender, favourite: spec.favourite };
      },
      async usedBy(db, tenantId, _id, name) {
        const numbers = await namesWhere(db, 'phone_numbers', 'e164', tenantId, sql`spec->>'voice' = ${name}`);
        const words = await namesWhere(db, 'pronunciation_entries', 'word', tenantId, sql`spec->'speechProfiles' @> jsonb_build_array(${name}::text)`);
        return [...numbers.map((n) => `phone number ${n}`), ...words.map((w) => `pronunciation entry '${w}'`)];
      },
    },
    box,
  );
}
