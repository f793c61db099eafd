import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { FakeClock } from '../../core/clock.js';
import { createLogger } from '../../core/logger.js';
import { acceptMessage } from '../../control-api/features/campaigns/accept-message.js';
import { CallbackDelivery } from '../../control-api/features/campaigns/callbacks.js';
import { CallbackReceiver, seedCampaign, seedTenant, type SeededTenant } from '../helpers/campaign-support.js';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import type { RunningServer } from '../../control-api/platform/http/serve.js';
import { SafeHttp } from '../../control-api/platform/net/safe-http.js';
import { createTenantsRepository } from '../../control-api/model/tenants/tenants-repository.js';
import { forEachStore } from '../helpers/stores.js';
import { startControl, twirpRequest } from './twirp-client.js';

/**
 * Issue 12: a Callback.URL the outbound address (SSRF) policy refuses is refused at SendMessage
 * as far as that can be decided without DNS, and a callback refused at delivery (a host name
 * resolving to a refused address) is given up at once, logged and recorded, never retried.
 */
const box = createSecretBox(Buffer.alloc(32, 7));

forEachStore('campaign callbacks and the outbound address policy', (store) => {
  const db = () => store().db;
  let tenant: SeededTenant;
  let campaignId: string;
  let control: RunningServer;
  const receiver = new CallbackReceiver();

  const setAllowlist = (entries: readonly string[]) =>
    sql`UPDATE tenants SET settings = jsonb_set(settings, '{ssrfAllowlist}', ${JSON.stringify(entries)}::jsonb) WHERE id = ${tenant.tenantId}`.execute(db());
  const send = (url: string) =>
    twirpRequest(control.port, { token: tenant.token, body: { CampaignID: campaignId, To: { PhoneNumber: '919876543210' }, Callback: { URL: url }, ScheduledAt: { Time: '2030-01-01T10:00:00Z' } } });

  before(async () => {
    await receiver.start();
    tenant = await seedTenant(db(), box, { clientId: 'acme', timezone: 'Asia/Kolkata' });
    campaignId = await seedCampaign(db(), box, tenant.tenantId, 'Callbacks');
    control = await startControl(store(), { clock: new FakeClock(Date.parse('2030-01-01T09:00:00Z')) });
  });
  after(async () => {
    await control?.close(0);
    await receiver.stop();
  });

  describe('SendMessage', () => {
    const refused = [
      'http://10.0.0.1/hooks/calls',
      'http://169.254.169.254/latest/meta-data/',
      'http://127.0.0.1:9/hooks',
      'http://0x7f.1/hooks',
      'http://[::1]:8080/hooks',
      'http://[::ffff:10.0.0.1]/hooks',
      'http://[fd00::5]/hooks',
      'https://192.168.1.20/hooks',
      'http://localhost:8080/hooks',
      'http://crm.localhost/hooks',
    ];
    for (const url of refused) {
      it(`refuses ${url} with 400 invalid_argument naming Callback.URL`, async () => {
        const res = await send(url);
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.equal(res.body.code, 'invalid_argument');
        assert.deepEqual(res.body.meta, { argument: 'Callback.URL' });
        assert.match(String(res.body.msg), /^Callback\.URL is refused by the outbound address policy: .*(loopback|private)/);
      });
    }

    for (const url of ['ftp://crm.example.com/hooks', 'javascript:alert(1)', 'file:///etc/passwd']) {
      it(`refuses the non-http scheme of ${url}`, async () => {
        const res = await send(url);
        assert.equal(res.status, 400);
        assert.deepEqual([res.body.code, res.body.meta], ['invalid_argument', { argument: 'Callback.URL' }]);
        assert.match(String(res.body.msg), /Callback\.URL/);
      });
    }

    it('accepts a host name (its addresses are checked at delivery) and what the tenant allowlist names, at once after the allowlist changes', async () => {
      assert.equal((await send('https://crm.example.com/hooks')).status, 200);
      assert.equal((await send('http://10.1.2.3/hooks')).status, 400);
      await setAllowlist(['10.0.0.0/8', 'localhost']);
      try {
        for (const url of ['http://10.1.2.3/hooks', 'http://localhost:8080/hooks']) assert.equal((await send(url)).status, 200, url);
        assert.equal((await send('http://192.168.1.20/hooks')).status, 400, 'outside the allowlisted network');
      } finally {
        await setAllowlist([]);
      }
    });
  });

  describe('delivery', () => {
    it('gives up at once on a callback refused at delivery (the host name resolves to loopback), logs why and records it', async () => {
      const clock = new FakeClock(Date.parse('2030-01-01T10:00:00Z'));
      const lines: string[] = [];
      const logger = createLogger({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
      const tenants = createTenantsRepository(box);
      const http = new SafeHttp({ allowlist: async (tenantId) => (await tenants.settingsWithSecrets(db(), tenantId))?.ssrfAllowlist ?? [] });
      const delivery = new CallbackDelivery({ db: db(), http, clock, logger, secretFor: async () => undefined, backoffMs: () => 1_000 });
      // Only this test's callbacks are due (those of the SendMessage tests name hosts outside the machine).
      await db().updateTable('campaign_callbacks').set({ given_up_at: new Date(clock.now()) }).where('delivered_at', 'is', null).execute();
      const port = new URL(receiver.url).port;
      // Accepted while the tenant allowed these; the allowlist was emptied before delivery.
      const ids: string[] = [];
      for (const url of [`http://localhost:${port}/hooks/calls`, `http://10.9.9.9:${port}/hooks/calls`]) {
        ids.push((await acceptMessage(db(), tenant.tenantId, { campaignId, to: '+919876543210', variables: {}, callback: { url }, scheduledAt: clock.now(), bypassCallingWindow: true }, { now: clock.now() })).messageId);
      }
      assert.equal(await delivery.deliverDue(), 2);
      clock.advance(3 * 3_600_000);
      assert.equal(await delivery.deliverDue(), 0, 'nothing is tried again');
      const rows = await db().selectFrom('campaign_callbacks').select(['message_id', 'tries', 'delivered_at', 'given_up_at', 'last_error']).where('message_id', 'in', ids).execute();
      assert.equal(rows.length, 2);
      for (const row of rows) {
        assert.equal(row.tries, 1);
        assert.equal(row.delivered_at, null);
        assert.notEqual(row.given_up_at, null, 'the final state is recorded');
        assert.match(row.last_error ?? '', /refused: .* is a loopback, private, link-local or reserved address/);
      }
      assert.equal(receiver.received.filter((r) => ids.includes(String(r.body.message_id))).length, 0, 'nothing reached the address');
      const logged = lines.map((l) => JSON.parse(l) as { msg: string; messageId: string; reason: string }).filter((l) => l.msg.startsWith('campaign callback refused by the outbound address policy'));
      assert.deepEqual(logged.map((l) => l.messageId).sort(), [...ids].sort());
      assert.ok(logged.every((l) => /refused/.test(l.reason)));
    });
  });
});
