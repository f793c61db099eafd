import assert from 'node:assert/strict';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import { seedCampaign, seedTenant, type SeededTenant } from '../helpers/campaign-support.js';
import type { RunningServer } from '../../control-api/platform/http/serve.js';
import { issueToken, revokeToken } from '../../control-api/model/tenants/api-tokens.js';
import { forEachStore } from '../helpers/stores.js';
import { startControl, twirpRequest, type TwirpCall } from './twirp-client.js';

const box = createSecretBox(Buffer.alloc(32, 7));
// A date about a month ahead (the endpoint refuses more than a year ahead).
const day = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

forEachStore('Campaign SendMessage over HTTP (Twirp)', (store) => {
  let server: RunningServer;
  let acme: SeededTenant;
  let globex: SeededTenant;
  let campaignId: string;
  let draftId: string;
  let globexCampaign: string;
  const enqueued: Array<{ id: string; at: number }> = [];

  const body = (extra: Record<string, unknown> = {}) => ({
    CampaignID: campaignId,
    To: { PhoneNumber: '919876543210' },
    Variables: { name: 'Asha' },
    Callback: { URL: 'https://crm.example.com/hooks/calls', State: { lead: 'L-7', nested: { a: [1, 2] } } },
    ScheduledAt: { Time: `${day}T10:30:00`, BypassCallingWindow: false },
    ...extra,
  });
  const call = (c: TwirpCall = {}) => twirpRequest(server.port, { token: acme.token, body: body(), ...c });

  before(async () => {
    const db = store().db;
    acme = await seedTenant(db, box, { clientId: 'acme', timezone: 'Asia/Kolkata' });
    globex = await seedTenant(db, box, { clientId: 'globex' });
    campaignId = await seedCampaign(db, box, acme.tenantId, 'Renewals');
    draftId = await seedCampaign(db, box, acme.tenantId, 'Draft', { published: false });
    globexCampaign = await seedCampaign(db, box, globex.tenantId, 'Theirs');
    server = await startControl(store(), { enqueue: async (id, at) => void enqueued.push({ id, at }) });
  });
  after(async () => server.close(0));

  describe('success', () => {
    it('answers 200 {message_id} and stores the request durably before answering', async () => {
      const res = await call();
      assert.equal(res.status, 200);
      assert.match(res.contentType, /^application\/json/);
      assert.deepEqual(Object.keys(res.body), ['message_id']);
      const id = String(res.body.message_id);
      assert.match(id, uuid);
      const row = await store().db.selectFrom('campaign_messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      assert.equal(row.status, 'scheduled');
      assert.equal(row.to_e164, '+919876543210');
      assert.equal(row.tenant_id, acme.tenantId);
      // No offset: read in the dashboard timezone (Asia/Kolkata, UTC+05:30).
      assert.equal(row.requested_at.toISOString(), `${day}T05:00:00.000Z`);
      assert.deepEqual(row.callback_state, { lead: 'L-7', nested: { a: [1, 2] } });
      assert.deepEqual(enqueued.at(-1), { id, at: Date.parse(`${day}T05:00:00Z`) });
      const callbacks = await store().db.selectFrom('campaign_callbacks').select('body').where('message_id', '=', id).execute();
      assert.equal(callbacks.length, 1);
      assert.equal(JSON.parse(callbacks[0]!.body).status, 'scheduled');
    });

    it('accepts the token with a Bearer prefix and ignores unknown fields', async () => {
      const res = await call({ token: `Bearer ${acme.token}`, body: { ...body(), SomethingNew: true } });
      assert.equal(res.status, 200);
    });

    it('returns the same message_id for a repeated request with the same Idempotency-Key', async () => {
      const headers = { 'Idempotency-Key': 'order-123-call' };
      const first = await call({ headers });
      const second = await call({ headers });
      assert.equal(first.status, 200);
      assert.equal(second.body.message_id, first.body.message_id);
      const rows = await store().db.selectFrom('campaign_messages').select('id').where('idempotency_key', '=', 'order-123-call').execute();
      assert.equal(rows.length, 1);
      const changed = await call({ headers, body: body({ To: { PhoneNumber: '14155550100' } }) });
      assert.equal(changed.status, 409);
      assert.equal(changed.body.code, 'already_exists');
    });
  });

  describe('authentication (401 unauthenticated "Authentication required")', () => {
    const expect401 = async (token: string | null) => {
      const res = await call({ token });
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { code: 'unauthenticated', msg: 'Authentication required' });
    };
    it('refuses a missing, wrong or other-tenant token', async () => {
      await expect401(null);
      await expect401('vap_wrong');
      await expect401(globex.token);
    });
    it('refuses an expired or revoked token and a token without the campaign scope', async () => {
      const db = store().db;
      const expired = await issueToken(db, { tenantId: acme.tenantId, name: 'old', scopes: ['campaign'], expiresAt: new Date(Date.now() - 1000) });
      await expect401(expired.token);
      const revoked = await issueToken(db, { tenantId: acme.tenantId, name: 'gone', scopes: ['campaign'] });
      assert.equal((await call({ token: revoked.token })).status, 200);
      await revokeToken(db, acme.tenantId, revoked.id);
      await expect401(revoked.token);
      // Cached as a good caller, then revoked: an invalid body is still answered unauthenticated.
      const cachedThenRevoked = await issueToken(db, { tenantId: acme.tenantId, name: 'cached', scopes: ['campaign'] });
      assert.equal((await call({ token: cachedThenRevoked.token })).status, 200);
      await revokeToken(db, acme.tenantId, cachedThenRevoked.id);
      const invalid = await call({ token: cachedThenRevoked.token, body: body({ To: { PhoneNumber: 'not a number' } }) });
      assert.equal(invalid.status, 401);
      assert.deepEqual(invalid.body, { code: 'unauthenticated', msg: 'Authentication required' });
      const sandbox = await issueToken(db, { tenantId: acme.tenantId, name: 'plants', scopes: ['sandbox'] });
      await expect401(sandbox.token);
    });
  });

  describe('routing (Twirp v7)', () => {
    it('answers 404 not_found for an unknown client ID or a bare host', async () => {
      for (const c of [{ host: 'nobody.localhost' }, { host: 'localhost' }, { host: '127.0.0.1' }, { host: 'localhost', path: '/api/v1/Campaign/Nothing' }]) {
        const res = await call(c);
        assert.equal(res.status, 404, JSON.stringify(c));
        assert.equal(res.body.code, 'not_found');
        assert.equal(typeof res.body.msg, 'string');
        assert.match(res.contentType, /^application\/json/);
      }
    });
    it('answers 404 bad_route for a path under /api/ that is no method of the service', async () => {
      for (const path of ['/api/v1/Campaign/SendMessages', '/api/v1/Campaign/sendMessage', '/api/v2/Campaign/SendMessage', '/api/v1/campaign.Campaign/SendMessage', '/api']) {
        const res = await call({ path });
        assert.equal(res.status, 404, path);
        assert.equal(res.body.code, 'bad_route', path);
        assert.deepEqual(res.body.meta, { twirp_invalid_route: `POST ${path}` });
        assert.match(String(res.body.msg), /no handler for path/);
        assert.match(res.contentType, /^application\/json/);
      }
    });
    it('answers bad_route 404 to any method but POST and to non-JSON content types', async () => {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const res = await call({ method, raw: '' });
        assert.equal(res.status, 404);
        assert.equal(res.body.code, 'bad_route');
        assert.deepEqual(res.body.meta, { twirp_invalid_route: `${method} /api/v1/Campaign/SendMessage` });
      }
      for (const contentType of ['application/x-protobuf', 'text/plain', '']) {
        const res = await call({ contentType });
        assert.equal(res.status, 404, contentType);
        assert.equal(res.body.code, 'bad_route');
      }
      assert.equal((await call({ contentType: 'application/json; charset=utf-8' })).status, 200);
    });
    it('answers malformed 400 to an undecodable body', async () => {
      for (const raw of ['{"CampaignID":', '', 'null', '[1]']) {
        const res = await call({ raw });
        assert.equal(res.status, 400, raw);
        assert.equal(res.body.code, 'malformed');
      }
    });
  });

  describe('validation (400 invalid_argument naming the field)', () => {
    const expect400 = async (payload: Record<string, unknown>, field: string, msg: RegExp) => {
      const res = await call({ body: payload });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.code, 'invalid_argument');
      assert.match(String(res.body.msg), msg);
      assert.deepEqual(res.body.meta, { argument: field });
    };
    it('refuses missing CampaignID and To.PhoneNumber', async () => {
      await expect400(body({ CampaignID: undefined }), 'CampaignID', /CampaignID is required/);
      await expect400(body({ To: {} }), 'To.PhoneNumber', /To.PhoneNumber is required/);
    });
    it('refuses an unknown, unpublished or other-tenant campaign alike', async () => {
      await expect400(body({ CampaignID: '00000000-0000-4000-8000-000000000000' }), 'CampaignID', /campaign not found/);
      await expect400(body({ CampaignID: globexCampaign }), 'CampaignID', /campaign not found/);
      await expect400(body({ CampaignID: draftId }), 'CampaignID', /not published/);
    });
    it('refuses a bad number, time, callback URL or variables', async () => {
      await expect400(body({ To: { PhoneNumber: '+91 98765 43210' } }), 'To.PhoneNumber', /digits only/);
      await expect400(body({ ScheduledAt: { Time: '15/01/2030 10:30' } }), 'ScheduledAt.Time', /ISO 8601/);
      await expect400(body({ Callback: { URL: 'file:///etc/passwd' } }), 'Callback.URL', /http\(s\)/);
      await expect400(body({ Variables: [1, 2] }), 'Variables', /string keys/);
    });
  });

  describe('concurrent requests (group commit) and the cached caller', () => {
    it('stores a burst of concurrent requests durably, each answered exactly as alone, with one scheduler job per due moment', async () => {
      const time = `${day}T11:45:00`;
      const at = Date.parse(`${day}T06:15:00Z`);
      const before = enqueued.length;
      const plain = Array.from({ length: 30 }, (_, i) => call({ body: body({ To: { PhoneNumber: `9198765${String(43000 + i)}` }, ScheduledAt: { Time: time } }) }));
      // Five keys each sent twice at once (same body: one message), and one key reused with another body.
      const keyed = Array.from({ length: 5 }, (_, i) => {
        const c: TwirpCall = { headers: { 'Idempotency-Key': `burst-${i}` }, body: body({ ScheduledAt: { Time: time } }) };
        return [call(c), call(c)];
      }).flat();
      const reused = call({ headers: { 'Idempotency-Key': 'burst-0' }, body: body({ To: { PhoneNumber: '14155550100' }, ScheduledAt: { Time: time } }) });
      const [plainRes, keyedRes, reusedRes] = await Promise.all([Promise.all(plain), Promise.all(keyed), reused]);
      assert.deepEqual(plainRes.map((r) => r.status), Array(30).fill(200));
      // burst-0 is raced by two bodies: whichever was stored first wins the key, the other body is
      // refused (409) - both of the identical pair, or the single reuse.
      const reuseWon = reusedRes.status === 200;
      assert.deepEqual(keyedRes.map((r) => r.status), [...(reuseWon ? [409, 409] : [200, 200]), ...Array(8).fill(200)]);
      assert.equal(reusedRes.status, reuseWon ? 200 : 409);
      for (let i = reuseWon ? 1 : 0; i < 5; i++) assert.equal(keyedRes[2 * i]!.body.message_id, keyedRes[2 * i + 1]!.body.message_id);
      const ids = [...new Set([...plainRes, ...keyedRes, reusedRes].filter((r) => r.status === 200).map((r) => String(r.body.message_id)))];
      assert.equal(ids.length, 35);
      const rows = await store().db.selectFrom('campaign_messages').select(['id', 'next_attempt_at', 'status']).where('id', 'in', ids).execute();
      assert.equal(rows.length, 35);
      assert.ok(rows.every((r) => r.status === 'scheduled' && r.next_attempt_at?.getTime() === at));
      const callbacks = await store().db.selectFrom('campaign_callbacks').select(['message_id', 'body']).where('message_id', 'in', ids).execute();
      assert.equal(callbacks.length, 35);
      assert.ok(callbacks.every((c) => JSON.parse(c.body).status === 'scheduled' && JSON.parse(c.body).sequence === 1));
      // All due at the same moment: one job sweeps them all (it names one of them).
      const jobs = enqueued.slice(before);
      assert.equal(jobs.length, 1);
      assert.equal(jobs[0]!.at, at);
      assert.ok(ids.includes(jobs[0]!.id));
    });

    it('fails only the request PostgreSQL refuses, not the others of its group', async () => {
      // jsonb cannot hold a NUL character: the server refuses that row's value.
      const poison = body({ Variables: { note: 'a\u0000b' } });
      const alone = await call({ body: poison });
      assert.notEqual(alone.status, 200);
      const good = Array.from({ length: 12 }, (_, i) => call({ body: body({ To: { PhoneNumber: `9198765${String(44000 + i)}` } }) }));
      const [bad, ...rest] = await Promise.all([call({ body: poison }), ...good, call({ body: poison })]);
      assert.deepEqual(rest.slice(0, 12).map((r) => r.status), Array(12).fill(200));
      assert.deepEqual([bad!.status, rest[12]!.status], [alone.status, alone.status]);
      assert.deepEqual(bad!.body, alone.body);
      const ids = rest.slice(0, 12).map((r) => String(r.body.message_id));
      assert.equal((await store().db.selectFrom('campaign_messages').select('id').where('id', 'in', ids).execute()).length, 12);
    });

    it('re-checks a cached caller when storing: a timezone change applies to the next request at once', async () => {
      const db = store().db;
      assert.equal((await call()).status, 200); // acme's caller is cached now
      await db.updateTable('tenants').set({ timezone: 'UTC' }).where('id', '=', acme.tenantId).execute();
      try {
        const res = await call({ body: body({ ScheduledAt: { Time: `${day}T09:00:00` } }) });
        assert.equal(res.status, 200);
        const row = await db.selectFrom('campaign_messages').select('requested_at').where('id', '=', String(res.body.message_id)).executeTakeFirstOrThrow();
        assert.equal(row.requested_at.toISOString(), `${day}T09:00:00.000Z`);
      } finally {
        await db.updateTable('tenants').set({ timezone: 'Asia/Kolkata' }).where('id', '=', acme.tenantId).execute();
      }
    });

    it('re-checks the campaign when storing: unpublished after a request, the next is refused and nothing is stored', async () => {
      const db = store().db;
      const own = await seedCampaign(db, box, acme.tenantId, 'Short-lived');
      assert.equal((await call({ body: body({ CampaignID: own }) })).status, 200);
      await db.updateTable('campaigns').set({ published: false }).where('id', '=', own).execute();
      const res = await call({ body: body({ CampaignID: own }) });
      assert.equal(res.status, 400);
      assert.match(String(res.body.msg), /not published/);
      const stored = await db.selectFrom('campaign_messages').select('id').where('campaign_id', '=', own).execute();
      assert.equal(stored.length, 1);
    });
  });
});
