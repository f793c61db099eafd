import assert from 'node:assert/strict';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { RpcError } from '@protobuf-ts/runtime-rpc';
import { TwirpFetchTransport } from '@protobuf-ts/twirp-transport';
import { Agent } from 'undici';
import { FakeClock } from '../../core/clock.js';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import { seedCampaign, seedTenant, type SeededTenant } from '../helpers/campaign-support.js';
import type { RunningServer } from '../../control-api/platform/http/serve.js';
import { forEachStore } from '../helpers/stores.js';
import { CampaignClient } from './generated/campaign.client.js';
import { SendMessageRequest } from './generated/campaign.js';
import { startControl, twirpRequest } from './twirp-client.js';

/**
 * The campaign service against a Twirp client generated from proto/campaign.proto by protobuf-ts
 * (test/campaigns/generated, `npm run proto`) over @protobuf-ts/twirp-transport, in both
 * encodings, as a customer's generated client would call it: the real control app on a real port.
 */
const box = createSecretBox(Buffer.alloc(32, 7));
const now = Date.parse('2030-01-10T08:00:00Z');

// The tenant is the Host's first label and Node's fetch derives Host from the URL, so the client
// addresses acme.localhost; this agent connects every name to 127.0.0.1 (as curl --resolve does).
const loopback = new Agent({
  connect: {
    lookup: (_host: string, options: { all?: boolean }, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) =>
      options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4),
  } as { lookup: typeof dnsLookup },
});

forEachStore('Campaign SendMessage through a generated Twirp client', (store) => {
  let server: RunningServer;
  let acme: SeededTenant;
  let campaignId: string;

  const client = (sendJson: boolean, extra: { useProtoFieldName?: boolean } = {}) =>
    new CampaignClient(
      new TwirpFetchTransport({
        baseUrl: `http://acme.localhost:${server.port}/api/v1`,
        sendJson,
        ...(extra.useProtoFieldName ? { jsonOptions: { useProtoFieldName: true } } : {}),
        fetchInit: { dispatcher: loopback } as RequestInit,
      }),
    );
  const request = (phone: string): SendMessageRequest =>
    SendMessageRequest.create({
      campaignId,
      to: { phoneNumber: phone },
      variables: { fields: { name: { kind: { oneofKind: 'stringValue', stringValue: 'Asha' } }, visits: { kind: { oneofKind: 'numberValue', numberValue: 3 } }, vip: { kind: { oneofKind: 'boolValue', boolValue: true } } } },
      callback: { url: 'https://crm.example.com/hooks/calls', state: { fields: { lead: { kind: { oneofKind: 'stringValue', stringValue: 'L-7' } } } } },
      scheduledAt: { time: '2030-01-15T10:30:00', bypassCallingWindow: true },
    });
  const stored = (id: string) => store().db.selectFrom('campaign_messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  before(async () => {
    const db = store().db;
    acme = await seedTenant(db, box, { clientId: 'acme', timezone: 'Asia/Kolkata' });
    campaignId = await seedCampaign(db, box, acme.tenantId, 'Renewals');
    server = await startControl(store(), { clock: new FakeClock(now) });
  });
  after(async () => server.close(0));

  for (const [encoding, sendJson] of [['JSON', true], ['protobuf', false]] as const) {
    it(`schedules a call sent in ${encoding}, answered in ${encoding}, stored with every field`, async () => {
      const call = client(sendJson).sendMessage(request('919876543210'), { meta: { Authorization: acme.token } });
      const [response, headers] = await Promise.all([call.response, call.headers]);
      assert.match(response.messageId, /^[0-9a-f-]{36}$/);
      assert.ok(!('content-type' in headers), 'the transport hides Content-Type; checked with the raw client below');
      const row = await stored(response.messageId);
      assert.equal(row.tenant_id, acme.tenantId);
      assert.equal(row.campaign_id, campaignId);
      assert.equal(row.to_e164, '+919876543210');
      assert.deepEqual(row.variables, { name: 'Asha', visits: 3, vip: true });
      assert.equal(row.callback_url, 'https://crm.example.com/hooks/calls');
      assert.deepEqual(row.callback_state, { lead: 'L-7' });
      // No offset: the dashboard timezone (Asia/Kolkata, UTC+05:30).
      assert.equal(row.requested_at.toISOString(), '2030-01-15T05:00:00.000Z');
      assert.equal(row.bypass_window, true);
    });
  }

  it('reads both encodings as the same request: one Idempotency-Key, one message', async () => {
    const meta = { Authorization: acme.token, 'Idempotency-Key': 'both-encodings-1' };
    const json = await client(true).sendMessage(request('14155550100'), { meta }).response;
    const binary = await client(false).sendMessage(request('14155550100'), { meta }).response;
    assert.equal(binary.messageId, json.messageId);
    const rows = await store().db.selectFrom('campaign_messages').select('id').where('idempotency_key', '=', 'both-encodings-1').execute();
    assert.equal(rows.length, 1);
  });

  it('accepts the original proto field names (campaign_id, to.phone_number, ...) from a client that sends them', async () => {
    const response = await client(true, { useProtoFieldName: true }).sendMessage(request('14155550101'), { meta: { Authorization: acme.token } }).response;
    const row = await stored(response.messageId);
    assert.equal(row.to_e164, '+14155550101');
    assert.deepEqual(row.callback_state, { lead: 'L-7' });
    assert.equal(row.bypass_window, true);
  });

  it('answers Twirp errors as JSON whatever the request encoding, read by the client as RpcError code and meta', async () => {
    for (const sendJson of [true, false]) {
      const missing = SendMessageRequest.create({ ...request('x'), to: { phoneNumber: '' } });
      const refused = await client(sendJson).sendMessage(missing, { meta: { Authorization: acme.token } }).response.then(
        () => assert.fail('accepted a request without To.PhoneNumber'),
        (error: unknown) => error,
      );
      assert.ok(refused instanceof RpcError);
      assert.equal(refused.code, 'invalid_argument');
      assert.equal(refused.message, 'To.PhoneNumber is required');
      assert.deepEqual(refused.meta, { argument: 'To.PhoneNumber' });
      const unauthenticated = await client(sendJson).sendMessage(request('919876543210'), { meta: { Authorization: 'vap_wrong' } }).response.catch((e: unknown) => e);
      assert.ok(unauthenticated instanceof RpcError);
      assert.equal(unauthenticated.code, 'unauthenticated');
      assert.equal(unauthenticated.message, 'Authentication required');
    }
  });

  describe('the wire, byte for byte', () => {
    const raw = (path: string, contentType: string, body: Buffer | string) =>
      new Promise<{ status: number; type: string; body: Buffer }>((resolve, reject) => {
        const headers = { Host: 'acme.localhost', 'Content-Type': contentType, Authorization: acme.token, 'Content-Length': String(Buffer.byteLength(body)) };
        const req = httpRequest({ host: '127.0.0.1', port: server.port, method: 'POST', path, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: Buffer.concat(chunks) }));
        });
        req.on('error', reject);
        req.end(body);
      });

    it('answers a protobuf request with application/protobuf, a JSON one with exactly {"message_id":"..."}', async () => {
      const binary = await raw('/api/v1/Campaign/SendMessage', 'application/protobuf', Buffer.from(SendMessageRequest.toBinary(request('919800000001'))));
      assert.equal(binary.status, 200);
      assert.equal(binary.type, 'application/protobuf');
      // Field 1 (message_id), wire type 2, 36 bytes of UUID.
      assert.deepEqual([...binary.body.subarray(0, 2)], [0x0a, 36]);
      assert.equal(binary.body.length, 38);
      const json = await raw('/api/v1/Campaign/SendMessage', 'application/json', SendMessageRequest.toJsonString(request('919800000002')));
      assert.equal(json.status, 200);
      assert.match(json.type, /^application\/json/);
      assert.match(json.body.toString('utf8'), /^\{"message_id":"[0-9a-f-]{36}"\}$/);
    });

    it('answers malformed (400) to bytes that are not a SendMessageRequest', async () => {
      for (const bytes of [Buffer.from([0x0a, 0x40, 0x61]), Buffer.from([0x0a, 0x02, 0xc3, 0x28]), Buffer.from([0x0f])]) {
        const res = await raw('/api/v1/Campaign/SendMessage', 'application/protobuf', bytes);
        assert.equal(res.status, 400, bytes.toString('hex'));
        assert.match(res.type, /^application\/json/);
        const error = JSON.parse(res.body.toString('utf8')) as { code: string; msg: string };
        assert.equal(error.code, 'malformed');
        assert.match(error.msg, /protobuf request could not be decoded/);
      }
    });

    it('answers bad_route (404) for a method the service does not have, in either encoding', async () => {
      for (const contentType of ['application/protobuf', 'application/json']) {
        const res = await raw('/api/v1/Campaign/CancelMessage', contentType, contentType === 'application/json' ? '{}' : Buffer.alloc(0));
        assert.equal(res.status, 404);
        assert.deepEqual(JSON.parse(res.body.toString('utf8')).meta, { twirp_invalid_route: 'POST /api/v1/Campaign/CancelMessage' });
        assert.equal(JSON.parse(res.body.toString('utf8')).code, 'bad_route');
      }
    });
  });

  describe('proto3 JSON field names', () => {
    const post = (body: unknown) => twirpRequest(server.port, { token: acme.token, body });
    const schedule = { Time: '2030-01-15T10:30:00Z' };

    it('accepts lowerCamelCase names (campaignId, to.phoneNumber, scheduledAt.bypassCallingWindow, callback.url)', async () => {
      const res = await post({
        campaignId,
        to: { phoneNumber: '919800000003' },
        variables: { plan: 'gold' },
        callback: { url: 'https://crm.example.com/c', state: { k: 'v' } },
        scheduledAt: { time: '2030-01-15T10:30:00Z', bypassCallingWindow: true },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const row = await stored(String(res.body['message_id']));
      assert.equal(row.to_e164, '+919800000003');
      assert.deepEqual(row.variables, { plan: 'gold' });
      assert.deepEqual(row.callback_state, { k: 'v' });
      assert.equal(row.bypass_window, true);
    });

    it('accepts names mixed across forms, and leaves the keys inside Variables and Callback.State as sent', async () => {
      const res = await post({ campaign_id: campaignId, To: { phone_number: '919800000004' }, Variables: { campaign_id: 'kept', PhoneNumber: 'kept' }, ScheduledAt: schedule });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual((await stored(String(res.body['message_id']))).variables, { campaign_id: 'kept', PhoneNumber: 'kept' });
    });

    it('refuses a field given under two names, naming it (400 invalid_argument)', async () => {
      const res = await post({ CampaignID: campaignId, campaignId, To: { PhoneNumber: '919800000005' }, ScheduledAt: schedule });
      assert.equal(res.status, 400);
      assert.equal(res.body['code'], 'invalid_argument');
      assert.deepEqual(res.body['meta'], { argument: 'CampaignID' });
      assert.match(String(res.body['msg']), /CampaignID is given twice \(as CampaignID and campaignId\)/);
      const nested = await post({ CampaignID: campaignId, To: { PhoneNumber: '919800000005', phone_number: '1' }, ScheduledAt: schedule });
      assert.deepEqual(nested.body['meta'], { argument: 'To.PhoneNumber' });
    });

    it('still names the spec field when a lowerCamel one is invalid', async () => {
      const res = await post({ campaignId, to: { phoneNumber: 'not a number' }, scheduledAt: schedule });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body['meta'], { argument: 'To.PhoneNumber' });
    });
  });
});
