import { acceptMessage } from '../../control-api/features/campaigns/accept-message.js';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import type { CampaignSpec } from '../../control-api/model/domain/campaign.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import type { Store } from '../../control-api/platform/store/database.js';
import { migrateToLatest } from '../../control-api/platform/store/migrate.js';
import { edgeAddresses } from './edge-cluster.js';
import { campaignDoc, numberDoc, recipeDoc, trunkDoc } from './resource-documents.js';

/** The DID the carrier (SIPp) calls through the edge. */
export const edgeDid = '+914440009001';

export interface EdgeTenant {
  readonly tenantId: string;
  readonly campaignId: string;
}

/**
 * Tenant `edge`: a carrier trunk whose termination address is the carrier's (SIPp's) and whose
 * outbound address is the callee's, a number on it running a short recipe (a greeting, "Bye.",
 * and the agent hangs up), and a published campaign from that number without retries.
 */
export async function seedEdgeTenant(store: Store, secretKey: Buffer, calleePort: number, options: { readonly greeting?: boolean } = {}): Promise<EdgeTenant> {
  const db = store.db;
  await migrateToLatest(db);
  const defs = createResourceDefinitions({ secretBox: createSecretBox(secretKey) });
  const tenant = await db.insertInto('tenants').values({ client_id: 'edge', name: 'Edge' }).returning('id').executeTakeFirstOrThrow();
  // Without the greeting (the load bench): the agent says "Bye." and hangs up.
  const recipe =
    options.greeting === false
      ? recipeDoc('Greet', { startBlockId: 'bye', blocks: [{ id: 'bye', type: 'close', settings: { closingScript: 'Bye.', disposition: 'done' } }], connections: [] })
      : recipeDoc('Greet', {
          blocks: [
            { id: 'greet', type: 'message', settings: { text: 'Hello from the edge.' } },
            { id: 'bye', type: 'close', settings: { closingScript: 'Bye.', disposition: 'done' } },
          ],
        });
  await defs.recipe.repository.create(db, tenant.id, recipe as never);
  await defs.sipTrunk.repository.create(db, tenant.id, trunkDoc('carrier', {
    inbound: { terminationAddresses: [edgeAddresses.carrier], dids: [edgeDid] },
    outbound: { address: edgeAddresses.callee, port: calleePort, transport: 'udp', username: 'edge-out', password: 'edge-trunk-secret-1' },
  }) as never);
  await defs.phoneNumber.repository.create(db, tenant.id, numberDoc(edgeDid, 'Greet', { provider: { type: 'customSipTrunk', trunk: 'carrier' }, language: 'en-US' }) as never);
  const campaign = await defs.campaign.repository.create(db, tenant.id, campaignDoc('Edge', edgeDid, 'Greet', { published: true, maxRetries: 0 }) as CampaignSpec);
  return { tenantId: tenant.id, campaignId: campaign.id };
}

/** `count` campaign messages due at `now`, each to its own callee (`+9197...`), as SendMessage stores them. */
export async function dueCalls(store: Store, tenant: EdgeTenant, count: number, now: number): Promise<void> {
  for (let i = 0; i < count; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, count - i) }, (_, k) =>
        acceptMessage(store.db, tenant.tenantId, { campaignId: tenant.campaignId, to: `+9197${String(10_000_000 + i + k)}`, variables: {}, scheduledAt: now, bypassCallingWindow: true }, { now }),
      ),
    );
  }
}
