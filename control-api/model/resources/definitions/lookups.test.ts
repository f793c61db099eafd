import assert from 'node:assert/strict';
import { forEachStore } from '../../../../test/helpers/stores.js';
import { builtInSpeechProfiles } from '../../domain/builtin-speech-profiles.js';
import { maskedSecret } from '../../../platform/crypto/secret.js';
import { createResourceDefinitions } from '../registry.js';
import {
  findCampaignForTenant,
  findNumberByE164,
  findRecipeById,
  findTrunkByExtension,
  findTrunksByDid,
  findTrunksBySource,
  searchSpeechProfiles,
} from './lookups.js';
import { campaignDoc, numberDoc, recipeDoc, testBox, trunkDoc } from '../../../../test/helpers/resource-documents.js';

forEachStore('gateway and scheduler lookups', (store) => {
  const defs = createResourceDefinitions({ secretBox: testBox() });
  const db = () => store().db;
  let tenantId: string;
  let otherTenant: string;
  let campaignId: string;

  before(async () => {
    const rows = await db().insertInto('tenants').values([{ client_id: 'look', name: 'Look' }, { client_id: 'other', name: 'Other' }]).returning(['id', 'client_id']).execute();
    tenantId = rows.find((r) => r.client_id === 'look')?.id as string;
    otherTenant = rows.find((r) => r.client_id === 'other')?.id as string;
    await defs.recipe.repository.create(db(), tenantId, recipeDoc('Flow') as never);
    await defs.sipTrunk.repository.create(db(), tenantId, trunkDoc('carrier') as never);
    await defs.phoneNumber.repository.create(db(), tenantId, numberDoc('+914440000001', 'Flow', { provider: { type: 'customSipTrunk', trunk: 'carrier' }, enabled: false }) as never);
    await defs.phoneNumber.repository.create(db(), tenantId, numberDoc('+14155550100', 'Flow') as never);
    const campaign = await defs.campaign.repository.create(db(), tenantId, campaignDoc('Renewals', '+14155550100', 'Flow', { published: true }) as never);
    campaignId = campaign.id;
  });

  it('finds a number by E.164 in any formatting, with its tenant, recipe and enabled flag', async () => {
    const route = await findNumberByE164(db(), '0091 44 4000 0001');
    assert.ok(route);
    assert.equal(route.tenantId, tenantId);
    assert.equal(route.enabled, false);
    assert.equal(route.provider, 'customSipTrunk');
    assert.ok(route.sipTrunkId);
    const recipe = await findRecipeById(db(), tenantId, route.recipeId);
    assert.equal(recipe?.name, 'Flow');
    assert.equal(await findNumberByE164(db(), '+914440000001', otherTenant), undefined);
    assert.equal(await findNumberByE164(db(), '+10000000'), undefined);
  });

  it('masks provider secrets in what it returns', async () => {
    const route = await findNumberByE164(db(), '+14155550100');
    assert.ok(route && route.spec.provider.type === 'providerA');
    assert.equal(route.spec.provider.authToken, maskedSecret);
  });

  it('finds trunks by source IP or FQDN (case-insensitive), by DID and by extension', async () => {
    const byIp = await findTrunksBySource(db(), '127.0.0.10');
    assert.deepEqual(byIp.map((t) => [t.name, t.tenantId]), [['carrier', tenantId]]);
    assert.equal(byIp[0]?.spec.outbound.password, maskedSecret);
    assert.equal((await findTrunksBySource(db(), 'gw.EXAMPLE.com')).length, 1);
    assert.deepEqual(await findTrunksBySource(db(), '127.0.0.11'), []);
    assert.equal((await findTrunksByDid(db(), '914440000001'))[0]?.name, 'carrier');
    assert.equal((await findTrunkByExtension(db(), '7001'))?.tenantId, tenantId);
    assert.equal(await findTrunkByExtension(db(), '7002'), undefined);
  });

  it('finds a campaign by id only within its tenant', async () => {
    const found = await findCampaignForTenant(db(), tenantId, campaignId);
    assert.equal(found?.name, 'Renewals');
    assert.equal(found?.published, true);
    assert.equal(found?.spec.ringDurationSeconds, 30);
    assert.equal(await findCampaignForTenant(db(), otherTenant, campaignId), undefined);
    assert.equal(await findCampaignForTenant(db(), tenantId, 'not-a-uuid'), undefined);
  });

  it('searches speech profiles by gender, language and accent, tags and favourites', async () => {
    const profiles = [
      { name: 'Asha', language: 'hi-IN', gender: 'female', provider: 'espeak-ng', voiceName: 'hi+f3', tags: ['Indian', 'Multi-lingual'], favourite: true },
      { name: 'Arjun', language: 'en-IN', gender: 'male', provider: 'espeak-ng', voiceName: 'en-in+m3', tags: ['Indian', 'Standard'] },
      { name: 'Layla', language: 'ar', gender: 'female', provider: 'espeak-ng', voiceName: 'ar+f2', tags: ['Standard'] },
    ];
    for (const p of profiles) await defs.speechProfile.repository.create(db(), tenantId, p as never);
    const names = async (filter: Parameters<typeof searchSpeechProfiles>[2]) =>
      (await searchSpeechProfiles(db(), tenantId, filter)).filter((p) => !p.builtIn).map((p) => p.spec.name);
    assert.deepEqual(await names({}), ['Arjun', 'Asha', 'Layla']);
    assert.deepEqual(await names({ gender: 'female' }), ['Asha', 'Layla']);
    assert.deepEqual(await names({ language: 'en' }), ['Arjun']);
    assert.deepEqual(await names({ language: 'hi-in' }), ['Asha']);
    assert.deepEqual(await names({ tags: ['indian'] }), ['Arjun', 'Asha']);
    assert.deepEqual(await names({ tags: ['Indian', 'Standard'] }), ['Arjun']);
    assert.deepEqual(await names({ favouritesOnly: true }), ['Asha']);
    assert.deepEqual((await searchSpeechProfiles(db(), otherTenant, {})).filter((p) => !p.builtIn), []);
    // The built-in catalogue comes first, with this tenant's stars.
    const builtIns = async (filter: Parameters<typeof searchSpeechProfiles>[2]) =>
      (await searchSpeechProfiles(db(), tenantId, filter)).filter((p) => p.builtIn).map((p) => p.spec.name);
    assert.deepEqual(await builtIns({ language: 'ar', gender: 'female' }), ['Arabic Female (espeak-ng)']);
    assert.deepEqual(await builtIns({ favouritesOnly: true }), []);
    const urdu = builtInSpeechProfiles.find((p) => p.spec.name === 'Urdu Male (espeak-ng)')!;
    await db().insertInto('speech_profile_favourites').values({ tenant_id: tenantId, profile_id: urdu.id }).execute();
    assert.deepEqual(await builtIns({ favouritesOnly: true }), ['Urdu Male (espeak-ng)']);
    assert.deepEqual((await searchSpeechProfiles(db(), otherTenant, { favouritesOnly: true })).map((p) => p.spec.name), [], 'stars are per tenant');
    assert.deepEqual((await searchSpeechProfiles(db(), tenantId, { tags: ['Indian'] })).slice(0, 2).map((p) => p.builtIn), [true, true]);
  });
});
