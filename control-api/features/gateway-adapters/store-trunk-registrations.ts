import { createHash, createHmac } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { RegistrationReport, TrunkRegistration, TrunkRegistrations } from '../../../core/ports/trunk-registrations.js';
import { openSecrets } from '../../platform/crypto/secret-fields.js';
import type { SecretBox } from '../../platform/crypto/secret-box.js';
import { sipTrunkSecretPaths, type SipTrunkSpec } from '../../model/domain/sip-trunk.js';
import type { Database } from '../../platform/store/schema.js';

export interface StoreTrunkRegistrationsOptions {
  readonly db: Kysely<Database>;
  readonly secretBox: SecretBox;
  /** The platform key (`secrets.secretKey`): Contact users are derived from it. */
  readonly secretKey: Buffer;
}

/** The key Contact users are derived from: its own, so no other use of the platform key can produce one. */
export function registrationContactKey(secretKey: Buffer): Buffer {
  return createHmac('sha256', secretKey).update('vap sip registration contact v1').digest();
}

/** The Contact user of a trunk's registration: 96 bits of HMAC over the trunk id, prefixed so it never reads as a number. */
export function registrationContactUser(key: Buffer, trunkId: string): string {
  return `r${createHmac('sha256', key).update(trunkId).digest('hex').slice(0, 24)}`;
}

/**
 * The gateway's TrunkRegistrations over `sip_trunks` (spec field `registration`) and
 * `sip_trunk_registrations` (migration 0400). The password is opened from its sealed form for the
 * registration client only; the revision is a digest that changes with any registration setting
 * or the credentials, and reveals neither.
 */
export class StoreTrunkRegistrations implements TrunkRegistrations {
  private readonly contactKey: Buffer;

  constructor(private readonly options: StoreTrunkRegistrationsOptions) {
    this.contactKey = registrationContactKey(options.secretKey);
  }

  async list(): Promise<readonly TrunkRegistration[]> {
    const rows = await this.options.db
      .selectFrom('sip_trunks')
      .select(['id', 'tenant_id', 'name', 'extension', 'spec'])
      .where(sql<boolean>`spec ? 'registration'`)
      .orderBy('created_at')
      .execute();
    const out: TrunkRegistration[] = [];
    for (const row of rows) {
      const spec = openSecrets(row.spec as SipTrunkSpec, { box: this.options.secretBox, tenantId: row.tenant_id, kind: 'SipTrunk', paths: sipTrunkSecretPaths });
      const r = spec.registration;
      if (!r) continue;
      const user = r.user ?? spec.outbound.username;
      if (!user) continue;
      const { username, password } = spec.outbound;
      const credentials = username && password ? { username, password } : undefined;
      const settings = { ...r, user, credentials };
      out.push({
        trunkId: row.id,
        tenantId: row.tenant_id,
        name: row.name,
        extension: row.extension,
        srtp: spec.srtp ?? 'off',
        registrar: r.registrar,
        port: r.port,
        transport: r.transport,
        domain: r.domain ?? r.registrar,
        user,
        expiresSeconds: r.expiresSeconds,
        ...(credentials ? { credentials } : {}),
        contactUser: registrationContactUser(this.contactKey, row.id),
        revision: createHash('sha256').update(JSON.stringify(settings)).digest('base64url').slice(0, 16),
      });
    }
    return out;
  }

  async report(r: RegistrationReport): Promise<void> {
    const values = {
      state: r.state,
      expires_at: r.expiresAt ?? null,
      retry_at: r.retryAt ?? null,
      last_error: r.lastError ?? null,
      updated_at: new Date(),
    };
    try {
      await this.options.db
        .insertInto('sip_trunk_registrations')
        .values({ trunk_id: r.trunkId, tenant_id: r.tenantId, contact: r.contact, ...values })
        .onConflict((oc) => oc.columns(['trunk_id', 'contact']).doUpdateSet(values))
        .execute();
    } catch (error) {
      // The trunk was deleted meanwhile (its rows went with it through the foreign key): nothing to record.
      if ((error as { code?: string }).code === '23503') return;
      throw error;
    }
  }
}
