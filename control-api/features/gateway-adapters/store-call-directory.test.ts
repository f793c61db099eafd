import assert from 'node:assert/strict';
import { FakeClock } from '../../../core/clock.js';
import { forEachStore } from '../../../test/helpers/stores.js';
import { createResourceDefinitions } from '../../model/resources/registry.js';
import { numberDoc, recipeDoc, testBox, trunkDoc } from '../../../test/helpers/resource-documents.js';
import { StoreCallDirectory } from './store-call-directory.js';

forEachStore('StoreCallDirectory (the gateway CallDirectory port)', (store) => {
  const defs = createResourceDefinitions({ secretBox: testBox() });
  let tenantId: string;
  const lookups: string[] = [];
  const clock = new FakeClock(0);
  let dns: Record<string, string[]> = { 'gw.carrier.example': ['127.0.0.20'] };
  let directory: StoreCallDirectory;

  before(async () => {
    const db = store().db;
    const [row] = await db.insertInto('tenants').values([{ client_id: 'dir', name: 'Dir' }]).returning('id').execute();
    tenantId = row?.id as string;
    await defs.recipe.repository.create(db, tenantId, recipeDoc('Flow') as never);
    await defs.sipTrunk.repository.create(db, tenantId, trunkDoc('by-ip', { inbound: { terminationAddresses: ['127.0.0.21'], dids: ['+914440000101'], extension: '8001' } }) as never);
    await defs.sipTrunk.repository.create(db, tenantId, trunkDoc('by-fqdn', { inbound: { terminationAddresses: ['gw.carrier.example'], dids: ['+914440000102'], extension: '8002' } }) as never);
    // by-ip's number routes through it; by-fqdn has only a DID provisioned as a provider number.
    await defs.phoneNumber.repository.create(db, tenantId, numberDoc('+914440000101', 'Flow', { provider: { type: 'customSipTrunk', trunk: 'by-ip' }, maxCallDurationMinutes: 7, endCallOnSilenceMinutes: 3, language: 'hi-IN' }) as never);
    await defs.phoneNumber.repository.create(db, tenantId, numberDoc('+914440000102', 'Flow') as never);
    directory = new StoreCallDirectory({
      db,
      clock,
      fqdnTtlMs: 60_000,
      resolve: async (host) => {
        lookups.push(host);
        return dns[host] ?? [];
      },
    });
  });

  it('finds trunks by source IP and by the resolved address of an FQDN, cached for the TTL', async () => {
    assert.deepEqual((await directory.trunksForSource('127.0.0.21')).map((t) => t.name), ['by-ip']);
    assert.deepEqual((await directory.trunksForSource('127.0.0.20')).map((t) => t.name), ['by-fqdn']);
    assert.deepEqual(await directory.trunksForSource('127.0.0.22'), []);
    assert.equal(lookups.length, 1, 'one resolution serves every call within the TTL');
    dns = { 'gw.carrier.example': ['127.0.0.22'] };
    clock.advance(60_001);
    assert.deepEqual((await directory.trunksForSource('127.0.0.22')).map((t) => t.name), ['by-fqdn']);
    assert.deepEqual(await directory.trunksForSource('127.0.0.20'), []);
  });

  it('returns numbers with the per-number call settings, in any formatting', async () => {
    const n = await directory.numberByE164('0091 44 4000 0101');
    assert.ok(n);
    assert.equal(n.tenantId, tenantId);
    assert.equal(n.enabled, true);
    assert.equal(n.maxCallDurationMinutes, 7);
    assert.equal(n.endCallOnSilenceMinutes, 3);
    assert.equal(n.language, 'hi-IN');
    assert.ok(n.sipTrunkId);
    assert.equal(await directory.numberByE164('+10000000'), undefined);
  });

  it('maps an Extension Number to its trunk and the trunk to its number (routed number, else a provisioned DID)', async () => {
    const ipTrunk = await directory.trunkByExtension('8001');
    const fqdnTrunk = await directory.trunkByExtension('8002');
    assert.equal(ipTrunk?.name, 'by-ip');
    assert.equal((await directory.numberForTrunk(ipTrunk!))?.e164, '+914440000101');
    assert.equal((await directory.numberForTrunk(fqdnTrunk!))?.e164, '+914440000102');
    assert.equal(await directory.trunkByExtension('9999'), undefined);
  });
});
