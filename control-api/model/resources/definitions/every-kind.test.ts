import assert from 'node:assert/strict';
import { forEachStore } from '../../../../test/helpers/stores.js';
import { createResourceDefinitions } from '../registry.js';
import type { ResourceDefinition } from '../resource-definition.js';
import { authDoc, campaignDoc, numberDoc, recipeDoc, testBox, trunkDoc } from '../../../../test/helpers/resource-documents.js';

/** One valid document per kind, in dependency order, and a change that must count as a change. */
const documents: ReadonlyArray<[kind: string, spec: Record<string, unknown>, change: Record<string, unknown>]> = [
  ['BusinessHours', { name: 'Office', timezone: 'Asia/Kolkata', hours: [{ day: 'monday', start: '09:00', end: '18:00' }] }, { closedDates: ['2026-12-25'] }],
  ['SipTrunk', trunkDoc('carrier') as Record<string, unknown>, { outbound: { username: 'acme-out', password: 'clear-sip-password-1', transport: 'tcp' } }],
  ['AuthProfile', authDoc('crm'), { auth: { scheme: 'bearer', token: 'rotated-token' } }],
  ['SpeechProfile', { name: 'Asha', language: 'hi-IN', gender: 'female', provider: 'espeak-ng', voiceName: 'hi+f3' }, { favourite: true }],
  ['PronunciationEntry', { word: 'GST', pronunciation: 'G S T', speechProfiles: ['Asha'] }, { caseSensitive: true }],
  ['KnowledgeDocument', { name: 'care', tags: ['plants'], content: 'Water weekly.' }, { tags: ['plants', 'care'] }],
  ['Recipe', recipeDoc('Flow') as Record<string, unknown>, { description: 'second version' }],
  ['PhoneNumber', numberDoc('+14155550100', 'Flow', { voice: 'Asha', pronunciationWords: ['GST'] }) as Record<string, unknown>, { enabled: false }],
  [
    'Campaign',
    campaignDoc('Renewals', '+14155550100', 'Flow', { workingWindow: { enabled: true, mode: 'businessHours', profile: 'Office' } }) as Record<string, unknown>,
    { published: true },
  ],
];

forEachStore('every resource kind', (store) => {
  const defs = createResourceDefinitions({ secretBox: testBox() });
  const byKind = new Map<string, ResourceDefinition>(defs.all.map((d) => [d.kind, d]));
  let tenantId: string;

  before(async () => {
    tenantId = (await store().db.insertInto('tenants').values({ client_id: 'kinds', name: 'Kinds' }).returning('id').executeTakeFirstOrThrow()).id;
  });

  it('the registry lists every kind once with a plural URL segment', () => {
    assert.deepEqual(defs.all.map((d) => d.kind).sort(), documents.map(([k]) => k).sort());
    assert.equal(new Set(defs.all.map((d) => d.plural)).size, defs.all.length);
  });

  for (const [kind, spec, change] of documents) {
    it(`${kind}: create, read back by id and natural key, detect no-op and change, replace`, async () => {
      const def = byKind.get(kind);
      assert.ok(def, kind);
      const db = store().db;
      const parsed = def.schema.parse(spec);
      const created = await def.repository.create(db, tenantId, parsed);
      const key = def.naturalKey(created.spec);
      assert.equal((await def.repository.findByNaturalKey(db, tenantId, key))?.id, created.id);
      assert.deepEqual((await def.repository.get(db, tenantId, created.id))?.spec, created.spec);
      assert.equal(await def.repository.isUnchanged(db, created, parsed), true, 'same document is unchanged');
      assert.equal(await def.repository.isUnchanged(db, created, created.spec), true, 'read-back (masked) document is unchanged');
      const changed = def.schema.parse({ ...spec, ...change });
      assert.equal(await def.repository.isUnchanged(db, created, changed), false, 'changed document is a change');
      const updated = await def.repository.update(db, tenantId, created.id, changed);
      assert.equal(await def.repository.isUnchanged(db, updated, changed), true);
    });
  }

  it('deletes in reverse dependency order, each refusal naming its user first', async () => {
    const db = store().db;
    for (const [kind] of [...documents].reverse()) {
      const def = byKind.get(kind);
      assert.ok(def);
      // Built-in speech profiles are listed too, and cannot be deleted: take the tenant's own.
      const item = (await def.repository.list(db, tenantId, { limit: 200 })).items.find((i) => i.builtIn !== true);
      assert.ok(item, kind);
      await def.repository.delete(db, tenantId, item.id);
    }
  });
});
