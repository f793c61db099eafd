import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { forEachStore } from '../helpers/stores.js';
import { startManagementApp, type ManagementHarness } from '../helpers/management-app.js';

const root = path.resolve(import.meta.dirname, '../..');
const exampleDir = path.join(root, 'examples/carriers');
const files = readdirSync(exampleDir).filter((f) => f.endsWith('.yaml')).sort();
const texts = files.map((f) => readFileSync(path.join(exampleDir, f), 'utf8'));
const docs = texts.flatMap((t) => parseAllDocuments(t).map((d) => d.toJS() as { kind: string; spec: Record<string, unknown> }));

forEachStore('the carrier examples of docs/carriers.md (examples/carriers) apply', (store) => {
  let h: ManagementHarness;
  const apply = (query = '') => h.client().request('POST', `/v1/apply${query}`, { raw: texts.join('\n---\n'), contentType: 'application/yaml' });

  before(async () => {
    h = await startManagementApp(store());
  });
  after(() => h.close());

  it('has one trunk for each way of connecting: IP ACL, digest, registration, and a secure (TLS + SRTP) one', () => {
    const trunks = docs.filter((d) => d.kind === 'SipTrunk').map((d) => d.spec);
    assert.equal(trunks.length, 4);
    assert.ok(trunks.some((t) => t['srtp'] === 'required' && (t['outbound'] as Record<string, unknown>)['transport'] === 'tls'), 'a secure trunk');
    assert.ok(trunks.some((t) => !('registration' in t) && !(t['outbound'] as Record<string, unknown>)['username']), 'an IP ACL trunk');
    assert.ok(trunks.some((t) => !('registration' in t) && (t['outbound'] as Record<string, unknown>)['password']), 'a digest trunk');
    assert.ok(trunks.some((t) => 'registration' in t), 'a registration trunk');
  });

  it('applies: a dry run writes nothing, the first apply creates all, the second changes nothing', async () => {
    const dry = await apply('?dryRun=true');
    assert.equal(dry.status, 200, dry.text);
    assert.equal((dry.body['summary'] as Record<string, number>)['created'], docs.length);
    const first = await apply();
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body['summary'], { created: docs.length, updated: 0, unchanged: 0 });
    const second = await apply();
    assert.deepEqual(second.body['summary'], { created: 0, updated: 0, unchanged: docs.length });
  });

  it('are quoted whole in docs/carriers.md, so the guide and the files cannot drift apart', () => {
    const guide = readFileSync(path.join(root, 'docs/carriers.md'), 'utf8');
    for (const [i, text] of texts.entries()) assert.ok(guide.includes(text.trimEnd()), `docs/carriers.md quotes examples/carriers/${files[i]} as it is`);
  });
});
