import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { forEachStore } from '../../../../test/helpers/stores.js';
import { authProfileDefinition } from '../../../model/resources/definitions/auth-profile.js';
import { testBox } from '../../../../test/helpers/resource-documents.js';
import { PgKnowledgeSearch, orQuery } from './pg-knowledge-search.js';
import { StoreAuthProfileResolver, tenantAllowlist } from './store-services.js';

forEachStore('recipe services over the domain tables', (store) => {
  let tenantA = '';
  let tenantB = '';
  const box = testBox();

  before(async () => {
    const db = store().db;
    const insertTenant = async (clientId: string, settings: unknown) =>
      (await db.insertInto('tenants').values({ client_id: clientId, name: clientId, settings: JSON.stringify(settings) as never }).returning('id').executeTakeFirstOrThrow()).id;
    tenantA = await insertTenant('acme', { ssrfAllowlist: ['10.0.0.0/8', 'crm.internal'] });
    tenantB = await insertTenant('other', {});
    const doc = (tenant: string, name: string, tags: string[], title: string, content: string) =>
      sql`insert into knowledge_documents (tenant_id, name, tags, spec) values (${tenant}::uuid, ${name}, ${sql.val(tags)}::text[], ${JSON.stringify({ name, title, tags, content })}::jsonb)`.execute(db);
    await doc(tenantA, 'refunds', ['billing'], 'Refunds', 'Refunds are processed within 5 to 7 working days.\n\nA refund goes back to the original card or UPI account.');
    await doc(tenantA, 'delivery', ['shipping'], 'Delivery', 'Orders ship within 24 hours.\n\nDelivery takes 3 days in metro cities.');
    await doc(tenantA, 'hindi', ['billing'], 'रिफंड', 'रिफंड पांच से सात दिनों में वापस आता है।');
    await doc(tenantB, 'secret', [], 'Other tenant', 'Refunds at the other tenant take one year.');
  });

  it('finds the best paragraph by full-text search, stemming English words', async () => {
    const hits = await new PgKnowledgeSearch(store().db).search(tenantA, 'how long does a refund take?', [], 3);
    assert.ok(hits.length >= 1);
    assert.match(hits[0]?.text ?? '', /Refunds are processed within 5 to 7 working days|refund goes back/);
    assert.ok(hits.every((h) => !h.text.includes('one year')), 'never another tenant');
  });

  it("ranks English words by stem, not by the recogniser's guess at their ending; a tie goes to the document's earlier passage", async () => {
    await sql`insert into knowledge_documents (tenant_id, name, tags, spec) values (${tenantA}::uuid, 'returns', ${sql.val(['returns'])}::text[], ${JSON.stringify({ name: 'returns', title: 'Returns', tags: ['returns'], content: 'Returns are accepted within 30 days of delivery, at our cost.\n\nDamaged pots are returned without a label.' })}::jsonb)`.execute(store().db);
    // "returned" is the form the later (and shorter) paragraph happens to use; the question was
    // about returns in general.
    const hits = await new PgKnowledgeSearch(store().db).search(tenantA, 'returned', ['returns'], 2);
    assert.deepEqual(hits.map((h) => h.text), ['Returns are accepted within 30 days of delivery, at our cost.', 'Damaged pots are returned without a label.']);
  });

  it('filters by tags (blank = whole library) and matches non-Latin scripts word for word', async () => {
    const search = new PgKnowledgeSearch(store().db);
    assert.deepEqual(await search.search(tenantA, 'delivery metro', ['billing'], 3), []);
    const shipping = await search.search(tenantA, 'delivery metro', ['shipping'], 3);
    assert.equal(shipping[0]?.text, 'Delivery takes 3 days in metro cities.');
    const hindi = await search.search(tenantA, 'रिफंड कब आएगा', [], 3);
    assert.equal(hindi[0]?.title, 'रिफंड');
    assert.deepEqual(await search.search(tenantA, '?!', [], 3), []);
  });

  it("gives the library's words for the recogniser: the tags' documents only, function words out, commonest first", async () => {
    const search = new PgKnowledgeSearch(store().db);
    const billing = await search.vocabulary(tenantA, ['billing'], 50);
    assert.equal(billing[0], 'refunds', 'in the title and both passages');
    assert.ok(billing.includes('card') && billing.includes('processed'));
    assert.ok(!billing.includes('delivery'), 'another tag');
    assert.ok(!billing.includes('the') && !billing.includes('to'), 'function words out');
    assert.ok(billing.every((w) => /^[a-z']+$/.test(w)), 'words the English recogniser can say (no digits, no Devanagari)');
    assert.ok(!billing.includes('year'), 'never another tenant');
    assert.deepEqual(await search.vocabulary(tenantA, ['billing'], 2), billing.slice(0, 2));
    assert.ok((await search.vocabulary(tenantA, [], 50)).includes('delivery'), 'no tags: the whole library');
    // A changed library is read again (the vocabulary is kept only while nothing changed).
    await store().db.updateTable('knowledge_documents').set({ spec: JSON.stringify({ name: 'refunds', title: 'Refunds', tags: ['billing'], content: 'Cashback lands in a week.' }) as never, updated_at: sql`now() + interval '1 second'` as never }).where('name', '=', 'refunds').execute();
    const changed = await search.vocabulary(tenantA, ['billing'], 50);
    assert.ok(changed.includes('cashback') && !changed.includes('processed'), changed.join(' '));
  });

  it('builds an OR query from words only (no tsquery syntax from the caller)', () => {
    assert.equal(orQuery("refund & (card) | 'x' !"), 'refund | card');
    assert.equal(orQuery('What is the refund time?'), 'refund | time');
  });

  it('resolves auth profiles with secrets opened, and the tenant allowlist', async () => {
    const definition = authProfileDefinition(box);
    await definition.repository.create(store().db, tenantA, { name: 'crm', auth: { scheme: 'bearer', token: 'tok-clear-1' } });
    await definition.repository.create(store().db, tenantA, { name: 'keyed', auth: { scheme: 'apiKey', in: 'query', name: 'key', value: 'v-1' } });
    const resolver = new StoreAuthProfileResolver(store().db, box);
    assert.deepEqual(await resolver.resolve(tenantA, 'crm'), { type: 'bearer', token: 'tok-clear-1' });
    assert.deepEqual(await resolver.resolve(tenantA, 'keyed'), { type: 'apiKey', in: 'query', name: 'key', value: 'v-1' });
    assert.equal(await resolver.resolve(tenantB, 'crm'), undefined);
    assert.deepEqual(await tenantAllowlist(store().db)(tenantA), ['10.0.0.0/8', 'crm.internal']);
    assert.deepEqual(await tenantAllowlist(store().db)(tenantB), []);
  });
});
