import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Kysely } from 'kysely';
import { systemClock, type Clock } from '../../../core/clock.js';
import type { CallDirectory, DirectoryNumber, DirectoryTrunk } from '../../../core/ports/call-directory.js';
import { findNumberByE164, findTrunkByExtension, findTrunksBySource, type NumberRoute, type TrunkRoute } from '../../model/resources/definitions/lookups.js';
import type { SipTrunkSpec } from '../../model/domain/sip-trunk.js';
import type { Database } from '../../platform/store/schema.js';

export interface StoreCallDirectoryOptions {
  readonly db: Kysely<Database>;
  readonly clock?: Clock;
  /** Resolves a trunk FQDN to addresses; DNS by default. */
  readonly resolve?: (host: string) => Promise<string[]>;
  /** How long FQDN resolutions are reused. */
  readonly fqdnTtlMs?: number;
}

// Specs stored before the field have no srtp: off.
const toTrunk = (t: TrunkRoute): DirectoryTrunk => ({ id: t.id, tenantId: t.tenantId, name: t.name, extension: t.extension, srtp: t.spec.srtp ?? 'off' });

const toNumber = (n: NumberRoute): DirectoryNumber => ({
  id: n.id,
  tenantId: n.tenantId,
  e164: n.e164,
  enabled: n.enabled,
  recipeId: n.recipeId,
  sipTrunkId: n.sipTrunkId,
  language: n.spec.language,
  maxCallDurationMinutes: n.spec.maxCallDurationMinutes,
  endCallOnSilenceMinutes: n.spec.endCallOnSilenceMinutes,
});

const defaultResolve = async (host: string): Promise<string[]> => (await lookup(host, { all: true })).map((a) => a.address);

/**
 * The gateway's CallDirectory over the store's indexed lookups. Trunks given by FQDN are matched
 * by resolving their names (cached for `fqdnTtlMs`), since a packet only carries an IP.
 */
export class StoreCallDirectory implements CallDirectory {
  private readonly clock: Clock;
  private fqdnCache: { at: number; byAddress: Map<string, string[]> } | undefined;
  private refreshing: Promise<Map<string, string[]>> | undefined;

  constructor(private readonly options: StoreCallDirectoryOptions) {
    this.clock = options.clock ?? systemClock;
  }

  async trunksForSource(address: string): Promise<readonly DirectoryTrunk[]> {
    const direct = await findTrunksBySource(this.options.db, address);
    const viaFqdn = (await this.fqdnAddresses()).get(address) ?? [];
    const missing = viaFqdn.filter((id) => !direct.some((t) => t.id === id));
    if (missing.length === 0) return direct.map(toTrunk);
    const rows = await this.options.db.selectFrom('sip_trunks').select(['id', 'tenant_id', 'name', 'extension', 'spec']).where('id', 'in', missing).execute();
    return [
      ...direct.map(toTrunk),
      ...rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, name: r.name, extension: r.extension, srtp: (r.spec as SipTrunkSpec).srtp ?? 'off' })),
    ];
  }

  async numberByE164(number: string): Promise<DirectoryNumber | undefined> {
    const n = await findNumberByE164(this.options.db, number);
    return n ? toNumber(n) : undefined;
  }

  async trunkByExtension(extension: string): Promise<DirectoryTrunk | undefined> {
    const t = await findTrunkByExtension(this.options.db, extension);
    return t ? toTrunk(t) : undefined;
  }

  /** The trunk's number: one that routes through it, else the first of its DIDs that is provisioned. */
  async numberForTrunk(trunk: DirectoryTrunk): Promise<DirectoryNumber | undefined> {
    const row = await this.options.db.selectFrom('phone_numbers').select('e164').where('sip_trunk_id', '=', trunk.id).orderBy('e164').executeTakeFirst();
    if (row) return this.numberByE164(row.e164);
    const t = await this.options.db.selectFrom('sip_trunks').select('dids').where('id', '=', trunk.id).executeTakeFirst();
    for (const did of t?.dids ?? []) {
      const n = await this.numberByE164(did);
      if (n && n.tenantId === trunk.tenantId) return n;
    }
    return undefined;
  }

  private async fqdnAddresses(): Promise<Map<string, string[]>> {
    const ttl = this.options.fqdnTtlMs ?? 60_000;
    if (this.fqdnCache && this.clock.now() - this.fqdnCache.at < ttl) return this.fqdnCache.byAddress;
    this.refreshing ??= this.resolveFqdns().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async resolveFqdns(): Promise<Map<string, string[]>> {
    const rows = await this.options.db.selectFrom('sip_trunks').select(['id', 'termination_addresses']).execute();
    const resolve = this.options.resolve ?? defaultResolve;
    const byAddress = new Map<string, string[]>();
    await Promise.all(
      rows.flatMap((r) =>
        r.termination_addresses
          .filter((a) => isIP(a) === 0)
          .map(async (host) => {
            let addresses: string[] = [];
            try {
              addresses = await resolve(host);
            } catch {
              // An unresolvable FQDN matches nothing until it resolves again.
            }
            for (const a of addresses) byAddress.set(a, [...(byAddress.get(a) ?? []), r.id]);
          }),
      ),
    );
    this.fqdnCache = { at: this.clock.now(), byAddress };
    return byAddress;
  }
}
