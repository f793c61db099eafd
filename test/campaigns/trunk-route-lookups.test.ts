import assert from 'node:assert/strict';
import { StoreTrunkRoutes } from '../../control-api/features/gateway-adapters/store-trunk-routes.js';
import { testBox, trunkDoc } from '../helpers/resource-documents.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { seedTenant } from '../helpers/campaign-support.js';
import { forEachStore } from '../helpers/stores.js';

// A burst of campaign calls over one trunk asks the originator for the same route at once.
forEachStore('trunk route lookups of a campaign burst', (store) => {
  it('shares one lookup among overlapping calls, and an edited trunk applies to the next call', async () => {
    const db = store().db;
    const box = testBox();
    const defs = createResourceDefinitions({ secretBox: box });
    const { tenantId } = await seedTenant(db, box, { clientId: 'burst' });
    const outbound = { address: '127.0.0.1', port: 5070, transport: 'udp' as const, username: 'out', password: 'trunk-secret-1' };
    const trunk = await defs.sipTrunk.repository.create(db, tenantId, trunkDoc('carrier', { outbound }) as never);
    const routes = new StoreTrunkRoutes({ db, secretBox: box });

    const burst = await Promise.all(Array.from({ length: 50 }, () => routes.outboundRoute(trunk.id)));
    assert.ok(burst.every((r) => r === burst[0]), 'overlapping lookups resolve to the one result');
    assert.deepEqual(burst[0], { trunkId: trunk.id, tenantId, host: '127.0.0.1', port: 5070, transport: 'udp', srtp: 'off', credentials: { username: 'out', password: 'trunk-secret-1' } });

    await defs.sipTrunk.repository.update(db, tenantId, trunk.id, trunkDoc('carrier', { outbound: { ...outbound, port: 5080, password: 'trunk-secret-2' } }) as never);
    const next = await routes.outboundRoute(trunk.id);
    assert.notEqual(next, burst[0]);
    assert.equal(next?.port, 5080);
    assert.equal(next?.credentials?.password, 'trunk-secret-2');
    assert.equal(await routes.outboundRoute('00000000-0000-4000-8000-000000000000'), undefined);
  });
});
