import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../core/logger.js';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import { tenantCallSpeech } from '../../control-api/model/tenants/tenant-speech.js';
import { createTenantsRepository } from '../../control-api/model/tenants/tenants-repository.js';
import { secretKey, startManagementApp, type ManagementHarness } from '../helpers/management-app.js';
import { forEachStore } from '../helpers/stores.js';

/**
 * A tenant's `settings.speech` (cloud speech for phone calls): keys sealed at rest, masked on
 * read, kept by a masked write, never logged; validated with precise field paths; applied through
 * `POST /v1/apply`; described in the OpenAPI document. The gateway reads it per call through the
 * store (tenantCallSpeech), where the keys are opened.
 */
const deepgramKey = 'dg-tenant-key-0123456789abcdef';
const elevenKey = 'xi-tenant-key-0123456789abcdef';
const azureKey = 'az-tenant-key-0123456789abcdef';

const speech = () => ({
  deepgram: { apiKey: deepgramKey, baseUrl: 'ws://127.0.0.1:9/dg', model: 'nova-3' },
  elevenlabs: { apiKey: elevenKey, baseUrl: 'http://127.0.0.1:9/xi' },
  azure: { apiKey: azureKey, region: 'centralindia' },
  stt: [{ languages: ['hi', 'ta-IN'], provider: 'deepgram' }, { languages: ['*'], provider: 'offline' }],
  unsupportedLanguageMessages: { 'bn-IN': 'দুঃখিত, এই লাইনে এখনও বাংলা বোঝা যায় না।' },
});

forEachStore('tenant speech settings (settings.speech)', (store) => {
  let h: ManagementHarness;
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });

  before(async () => {
    h = await startManagementApp(store(), {}, { logger: createLogger({ level: 'trace' }, sink) });
  });
  after(() => h.close());

  it('seals the keys at rest, masks them on read, keeps them on a masked PUT, opens them for calls, never logs them', async () => {
    const op = h.client();
    const created = await op.post('/v1/tenants', { clientId: 'talky', name: 'Talky', timezone: 'Asia/Kolkata', settings: { speech: speech() } });
    assert.equal(created.status, 201, created.text);
    const read = (created.body['spec'] as { settings: { speech: Record<string, Record<string, unknown>> } }).settings.speech;
    assert.equal(read['deepgram']!['apiKey'], '********');
    assert.equal(read['elevenlabs']!['apiKey'], '********');
    assert.equal(read['azure']!['apiKey'], '********');
    assert.equal(read['deepgram']!['baseUrl'], 'ws://127.0.0.1:9/dg');
    const row = await store().db.selectFrom('tenants').select(['id', 'settings']).where('client_id', '=', 'talky').executeTakeFirstOrThrow();
    const stored = JSON.stringify(row.settings);
    for (const key of [deepgramKey, elevenKey, azureKey]) assert.ok(!stored.includes(key), 'sealed at rest');
    const got = await op.get('/v1/tenants/talky');
    assert.ok(![deepgramKey, elevenKey, azureKey].some((k) => got.text.includes(k)));
    // The document read back can be PUT as is: the masks keep the stored keys.
    const put = await op.put('/v1/tenants/talky', { name: 'Talky', timezone: 'Asia/Kolkata', settings: (got.body['spec'] as { settings: unknown }).settings });
    assert.equal(put.status, 200, put.text);
    const forCalls = await tenantCallSpeech(store().db, createTenantsRepository(createSecretBox(secretKey)))(row.id);
    assert.deepEqual(forCalls.credentials, {
      deepgram: { apiKey: deepgramKey, baseUrl: 'ws://127.0.0.1:9/dg', model: 'nova-3' },
      elevenlabs: { apiKey: elevenKey, baseUrl: 'http://127.0.0.1:9/xi' },
      azure: { apiKey: azureKey, region: 'centralindia' },
    });
    assert.deepEqual(forCalls.sttRoutes, speech().stt);
    assert.deepEqual(forCalls.unsupportedLanguageMessages, speech().unsupportedLanguageMessages);
    // A PATCH that changes the model keeps the key (merge patch over the masked document).
    const patched = await op.request('PATCH', '/v1/tenants/talky', { body: { settings: { speech: { deepgram: { model: 'nova-2' } } } }, contentType: 'application/merge-patch+json' });
    assert.equal(patched.status, 200, patched.text);
    const afterPatch = await tenantCallSpeech(store().db, createTenantsRepository(createSecretBox(secretKey)))(row.id);
    assert.equal(afterPatch.credentials.deepgram?.apiKey, deepgramKey);
    assert.equal(afterPatch.credentials.deepgram?.model, 'nova-2');
    assert.ok(logLines.length > 0, 'the app logged its requests');
    assert.ok(![deepgramKey, elevenKey, azureKey].some((k) => logLines.join('').includes(k)), 'no key in any log line');
  });

  it('validates the block with precise field paths', async () => {
    const op = h.client();
    const issues = async (value: Record<string, unknown>) => {
      const res = await op.post('/v1/tenants', { clientId: 'badspeech', name: 'Bad', settings: { speech: value } });
      assert.equal(res.status, 400, res.text);
      return (res.body['issues'] as Array<{ path: string; message: string }>).map((i) => `${i.path}: ${i.message}`);
    };
    assert.deepEqual(await issues({ deepgram: { apiKey: 'k', baseUrl: 'ftp://127.0.0.1/' } }), ['settings.speech.deepgram.baseUrl: settings.speech.deepgram.baseUrl must be an absolute wss or ws or https or http URL']);
    assert.deepEqual(await issues({ elevenlabs: { apiKey: 'k', baseUrl: 'https://user:pw@127.0.0.1/' } }), ['settings.speech.elevenlabs.baseUrl: settings.speech.elevenlabs.baseUrl must not carry credentials; use the apiKey field']);
    assert.deepEqual(await issues({ azure: { apiKey: 'k' } }), ['settings.speech.azure.region: settings.speech.azure.region is required unless settings.speech.azure.baseUrl is set']);
    assert.deepEqual(await issues({ stt: [{ languages: ['hi'], provider: 'deepgram' }] }), ['settings.speech.stt[0].provider: settings.speech.stt[0].provider deepgram needs settings.speech.deepgram']);
    assert.deepEqual(await issues({ stt: [{ languages: ['Hindi'], provider: 'offline' }] }), ["settings.speech.stt[0].languages[0]: settings.speech.stt[].languages entries must be '*' or a BCP 47 language tag such as 'hi' or 'hi-IN'"]);
    assert.deepEqual(await issues({ stt: [{ languages: ['hi'], provider: 'whisper' }] }), ['settings.speech.stt[0].provider: settings.speech.stt[].provider must be one of deepgram, offline']);
    assert.deepEqual(await issues({ deepgram: { apiKey: 'k', surprise: 1 } }), ['settings.speech.deepgram.surprise: settings.speech.deepgram.surprise is not a known field (check its spelling)']);
    const missingKey = await issues({ deepgram: { baseUrl: 'wss://dg.example' } });
    assert.deepEqual(missingKey, ['settings.speech.deepgram.apiKey: settings.speech.deepgram.apiKey is required']);
    const badMessage = await issues({ unsupportedLanguageMessages: { hindi: 'x' } });
    assert.equal(badMessage.length, 1);
    assert.match(badMessage[0]!, /^settings\.speech\.unsupportedLanguageMessages.*BCP 47 language tags/);
  });

  it('applies through POST /v1/apply: created with the keys sealed, then unchanged the second time', async () => {
    const doc = JSON.stringify([{ apiVersion: 'vap/v1', kind: 'Tenant', spec: { clientId: 'applied', name: 'Applied', settings: { speech: speech() } } }]);
    const apply = () => h.client().request('POST', '/v1/apply', { raw: doc, contentType: 'application/json' });
    const first = await apply();
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body['summary'], { created: 1, updated: 0, unchanged: 0 });
    const second = await apply();
    assert.deepEqual(second.body['summary'], { created: 0, updated: 0, unchanged: 1 });
    const row = await store().db.selectFrom('tenants').select('settings').where('client_id', '=', 'applied').executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row.settings).includes(deepgramKey));
  });

  it('is described in the OpenAPI document (generated from the schema)', () => {
    const schemas = (h.document as unknown as { components: { schemas: Record<string, { properties?: Record<string, { properties?: Record<string, unknown> }> }> } }).components.schemas;
    const speechSchema = schemas['TenantSpec']?.properties?.['settings']?.properties?.['speech'] as { properties?: Record<string, { properties?: Record<string, unknown> }> } | undefined;
    assert.ok(speechSchema?.properties, JSON.stringify(schemas['TenantSpec']).slice(0, 500));
    assert.deepEqual(Object.keys(speechSchema.properties).sort(), ['azure', 'deepgram', 'elevenlabs', 'stt', 'unsupportedLanguageMessages']);
    assert.ok(speechSchema.properties['deepgram']?.properties?.['apiKey']);
  });
});
