import assert from 'node:assert/strict';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import { seedCampaign, seedTenant, type SeededTenant } from '../helpers/campaign-support.js';
import type { RunningServer } from '../../control-api/platform/http/serve.js';
import type { Store } from '../../control-api/platform/store/database.js';
import { freshStore } from '../helpers/stores.js';
import { startControl, twirpRequest } from './twirp-client.js';

const box = createSecretBox(Buffer.alloc(32, 7));

/**
 * Variables and Callback.State are stored as jsonb, which refuses U+0000 and lone surrogates:
 * SendMessage answered 500 (issue 12). It must be a Twirp invalid_argument naming the field in
 * meta.argument, and store nothing.
 */
describe('SendMessage with text PostgreSQL cannot store', () => {
  let store: Store;
  let server: RunningServer;
  let acme: SeededTenant;
  let campaignId: string;

  before(async function () {
    this.timeout(60_000);
    store = await freshStore('postgres');
    acme = await seedTenant(store.db, box, { clientId: 'acme' });
    campaignId = await seedCampaign(store.db, box, acme.tenantId, 'Renewals');
    server = await startControl(store);
  });
  after(async () => {
    await server?.close(0);
    await store?.close();
  });

  // A time in the past means "now" (docs/api.md), so the test needs no clock.
  const body = (extra: Record<string, unknown>) => ({ CampaignID: campaignId, To: { PhoneNumber: '919876543210' }, ScheduledAt: { Time: '2020-01-01T00:00:00Z' }, ...extra });

  for (const [title, extra, argument] of [
    ['U+0000 in a variable', { Variables: { note: 'a\u0000b' } }, 'Variables.note'],
    ['a lone surrogate in a variable', { Variables: { note: 'emoji \ud83d' } }, 'Variables.note'],
    ['U+0000 in a callback state key', { Callback: { URL: 'https://crm.example.com/h', State: { ['le\u0000ad']: 1 } } }, 'Callback.State.le\\u0000ad'],
    ['a lone surrogate deep in the callback state', { Callback: { URL: 'https://crm.example.com/h', State: { a: [{ b: '\udfff' }] } } }, 'Callback.State.a[0].b'],
  ] as const) {
    it(`refuses ${title} with invalid_argument naming ${argument}`, async () => {
      const res = await twirpRequest(server.port, { token: acme.token, body: body(extra) });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body['code'], 'invalid_argument');
      assert.deepEqual(res.body['meta'], { argument });
      assert.match(String(res.body['msg']), /U\+0000|well-formed Unicode/);
    });
  }

  it('stored none of them, and still takes a clean request', async () => {
    assert.equal((await store.db.selectFrom('campaign_messages').select('id').execute()).length, 0);
    const ok = await twirpRequest(server.port, { token: acme.token, body: body({ Variables: { note: 'नमस्ते 😀' } }) });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });
});
