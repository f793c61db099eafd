import { sql } from 'kysely';
import type { SecretBox } from '../../../platform/crypto/secret-box.js';
import { sipTrunkSchema, sipTrunkSecretPaths, type SipTrunkSpec } from '../../domain/sip-trunk.js';
import { defineKind } from './define-kind.js';
import { namesWhere, targets } from './references.js';

export function sipTrunkDefinition(box: SecretBox) {
  return defineKind<SipTrunkSpec>(targets.sipTrunk, box, {
    schema: sipTrunkSchema,
    naturalKey: (spec) => spec.name,
    secretPaths: sipTrunkSecretPaths,
    // Digest authentication needs both halves: a username without a password cannot answer a challenge.
    requiredSecrets: (spec) => (spec.outbound.username ? ['outbound.password'] : []),
    uniqueMessages: {
      sip_trunks_extension_key: (spec) => `extension ${spec.inbound.extension ?? ''} is already used by another SIP trunk`,
    },
    async columns(_db, _tenantId, spec) {
      return {
        termination_addresses: spec.inbound.terminationAddresses,
        dids: spec.inbound.dids,
        extension: spec.inbound.extension ?? null,
      };
    },
    async usedBy(db, tenantId, id) {
      const numbers = await namesWhere(db, 'phone_numbers', 'e164', tenantId, sql`sip_trunk_id = ${id}`);
      return numbers.map((n) => `phone number ${n}`);
    },
  });
}
