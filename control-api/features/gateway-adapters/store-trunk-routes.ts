import type { Kysely } from 'kysely';
import type { OutboundTrunkRoute, TrunkRoutes } from '../../../core/ports/trunk-routes.js';
import { openSecrets } from '../../platform/crypto/secret-fields.js';
import type { SecretBox } from '../../platform/crypto/secret-box.js';
import { sipTrunkSecretPaths, type SipTrunkSpec } from '../../model/domain/sip-trunk.js';
import type { Database } from '../../platform/store/schema.js';

export interface StoreTrunkRoutesOptions {
  readonly db: Kysely<Database>;
  readonly secretBox: SecretBox;
}

/**
 * The gateway's TrunkRoutes over `sip_trunks`: outbound address (spec field `outbound.address`,
 * defaulting to the first termination address, else the registrar), port (5060, 5061 for TLS), transport, and the
 * outbound username/password with the password opened from its sealed form for this call only.
 */
export class StoreTrunkRoutes implements TrunkRoutes {
  // Lookups of one trunk that overlap share one query and one decryption: a burst of campaign
  // calls over a trunk otherwise costs a round trip each before its INVITE. Nothing is kept
  // after the query returns, so an edited trunk applies to the next call exactly as before.
  private readonly inFlight = new Map<string, Promise<OutboundTrunkRoute | undefined>>();

  constructor(private readonly options: StoreTrunkRoutesOptions) {}

  outboundRoute(trunkId: string): Promise<OutboundTrunkRoute | undefined> {
    const pending = this.inFlight.get(trunkId);
    if (pending) return pending;
    const lookup = this.load(trunkId).finally(() => this.inFlight.delete(trunkId));
    this.inFlight.set(trunkId, lookup);
    return lookup;
  }

  private async load(trunkId: string): Promise<OutboundTrunkRoute | undefined> {
    const row = await this.options.db
      .selectFrom('sip_trunks')
      .select(['id', 'tenant_id', 'termination_addresses', 'spec'])
      .where('id', '=', trunkId)
      .executeTakeFirst();
    if (!row) return undefined;
    const spec = openSecrets(row.spec as SipTrunkSpec, { box: this.options.secretBox, tenantId: row.tenant_id, kind: 'SipTrunk', paths: sipTrunkSecretPaths });
    const out = spec.outbound;
    // A registering trunk without termination addresses takes calls at its registrar (the usual carrier set-up).
    const host = out?.address ?? row.termination_addresses[0] ?? spec.registration?.registrar;
    if (!host) return undefined;
    const transport = out?.transport ?? 'udp';
    const { username, password } = out ?? {};
    return {
      trunkId: row.id,
      tenantId: row.tenant_id,
      host,
      port: out?.port ?? (transport === 'tls' ? 5061 : 5060),
      transport,
      srtp: spec.srtp ?? 'off',
      ...(username && password ? { credentials: { username, password } } : {}),
    };
  }
}
