import assert from 'node:assert/strict';
import { issueToken, revokeToken } from '../../control-api/model/tenants/api-tokens.js';
import { forEachStore } from '../helpers/stores.js';
import { PlantClient } from './plant-client.js';

const STATIC_A = 'static-sandbox-token-aaaaaaaa';
const STATIC_B = 'static-sandbox-token-bbbbbbbb';
const STATIC_PUNCT = 'static!token@with#punct$1';
const INT64_MAX = '9223372036854775807';
const INT64_MIN = '-9223372036854775808';

forEachStore('plant store API', (store) => {
  let client: PlantClient;
  let tenantA: string;
  let tokenA: string;
  let tokenA2: string;
  let tokenB: string;
  const refused: Record<string, string> = {};

  before(async () => {
    const db = store().db;
    const insertTenant = async (clientId: string): Promise<string> =>
      (await db.insertInto('tenants').values({ client_id: clientId, name: clientId }).returning('id').executeTakeFirstOrThrow()).id;
    tenantA = await insertTenant('acme');
    const tenantB = await insertTenant('globex');
    tokenA = (await issueToken(db, { tenantId: tenantA, name: 'a', scopes: ['sandbox'] })).token;
    tokenA2 = (await issueToken(db, { tenantId: tenantA, name: 'a2', scopes: ['sandbox', 'campaign'] })).token;
    tokenB = (await issueToken(db, { tenantId: tenantB, name: 'b', scopes: ['sandbox'] })).token;
    const revoked = await issueToken(db, { tenantId: tenantA, name: 'revoked', scopes: ['sandbox'] });
    await revokeToken(db, tenantA, revoked.id);
    refused['revoked'] = revoked.token;
    refused['expired'] = (await issueToken(db, { tenantId: tenantA, name: 'old', scopes: ['sandbox'], expiresAt: new Date(Date.now() - 1000) })).token;
    refused['other scope'] = (await issueToken(db, { tenantId: tenantA, name: 'campaign', scopes: ['campaign'] })).token;
    refused['unknown'] = 'vap_thisTokenWasNeverIssuedAnywhere0123456789';
    refused['static with suffix'] = `${STATIC_A}x`;
    client = await PlantClient.start(store(), [STATIC_A, STATIC_B, STATIC_PUNCT]);
  });
  after(async () => client.close());

  describe('POST /plants', () => {
    it('stores a NewPlant and answers 200 with the Plant (name, tag)', async () => {
      const res = await client.call('POST', '/plants', { token: tokenA, json: { id: 1, name: 'Monstera', tag: 'indoor' } });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { name: 'Monstera', tag: 'indoor' });
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    });

    it('leaves tag out of the Plant when it was not given', async () => {
      const res = await client.call('POST', '/plants', { token: tokenA, json: { id: 2, name: 'Fern' } });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { name: 'Fern' });
    });

    it('keeps Unicode names intact (Devanagari, Arabic, emoji)', async () => {
      const name = 'तुलसी ريحان 🌿';
      const res = await client.call('POST', '/plants', { token: tokenA, json: { id: 3, name, tag: 'पवित्र' } });
      assert.deepEqual(res.body, { name, tag: 'पवित्र' });
    });

    it('refuses a duplicate id of the same owner with 400', async () => {
      const res = await client.call('POST', '/plants', { token: tokenA2, json: { id: 1, name: 'Another' } });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { error: 400, message: 'a plant with id 1 already exists' });
    });

    it('creates a plant exactly once when the same id is posted concurrently', async () => {
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => client.call('POST', '/plants', { token: tokenA, json: { id: 77, name: `race ${i}` } })));
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 400, 400, 400, 400, 400, 400, 400]);
      const stored = await store().db.selectFrom('plants').select('name').where('owner', '=', `tenant:${tenantA}`).where('id', '=', 77n).execute();
      assert.equal(stored.length, 1);
    });

    const invalid: ReadonlyArray<[string, string, RegExp]> = [
      ['missing id', '{"name":"x"}', /id is required/],
      ['missing name', '{"id":10}', /name is required/],
      ['id as a string', '{"id":"10","name":"x"}', /id must be an integer/],
      ['id with a fraction', '{"id":10.5,"name":"x"}', /id must be an integer/],
      ['id null', '{"id":null,"name":"x"}', /id must be an integer/],
      ['id above int64', `{"id":9223372036854775808,"name":"x"}`, /outside the int64 range/],
      ['id below int64', `{"id":-9223372036854775809,"name":"x"}`, /outside the int64 range/],
      ['id 1e30', '{"id":1e30,"name":"x"}', /outside the int64 range/],
      ['name as a number', '{"id":11,"name":5}', /name must be a string/],
      ['empty name', '{"id":11,"name":""}', /name must not be empty/],
      ['name over 200 characters', JSON.stringify({ id: 11, name: 'x'.repeat(201) }), /at most 200/],
      ['name with U+0000', '{"id":11,"name":"a\\u0000b"}', /U\+0000/],
      ['name with a lone surrogate', '{"id":11,"name":"a\\ud800"}', /well-formed/],
      ['tag null', '{"id":11,"name":"x","tag":null}', /tag must be a string/],
      ['tag as an object', '{"id":11,"name":"x","tag":{}}', /tag must be a string/],
      ['unknown field', '{"id":11,"name":"x","colour":"green"}', /unknown field "colour"/],
      ['an array', '[{"id":11,"name":"x"}]', /must be a JSON object/],
      ['a bare number', '42', /must be a JSON object/],
      ['null', 'null', /must be a JSON object/],
      ['malformed JSON', '{"id":11,"name":', /malformed JSON/],
      ['trailing garbage', '{"id":11,"name":"x"} x', /malformed JSON/],
      ['duplicate keys with different values', '{"id":11,"id":12,"name":"x"}', /malformed JSON: Duplicate key/],
      ['an empty body', '', /request body is empty/],
    ];
    for (const [what, raw, message] of invalid) {
      it(`refuses ${what} with 400`, async () => {
        const res = await client.call('POST', '/plants', { token: tokenA, raw, headers: { 'Content-Type': 'application/json' } });
        assert.equal(res.status, 400);
        assert.equal((res.body as { error: number }).error, 400);
        assert.match((res.body as { message: string }).message, message);
      });
    }

    it('refuses a body that is not UTF-8 with 400', async () => {
      const raw = Buffer.concat([Buffer.from('{"id":12,"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
      const res = await client.call('POST', '/plants', { token: tokenA, raw, headers: { 'Content-Type': 'application/json' } });
      assert.equal(res.status, 400);
      assert.match((res.body as { message: string }).message, /not valid UTF-8/);
    });

    it('refuses a body over 64 KiB with 413, with and without Content-Length', async () => {
      const big = JSON.stringify({ id: 13, name: 'x', tag: 'y'.repeat(70_000) });
      const res = await client.call('POST', '/plants', { token: tokenA, json: big });
      assert.equal(res.status, 413);
      assert.deepEqual(res.body, { error: 413, message: 'request body exceeds 65536 bytes' });
      const chunked = await client.chunkedPost('/plants', tokenA, [Buffer.from('{"id":13,"name":"'), Buffer.alloc(40_000, 0x61), Buffer.alloc(40_000, 0x61), Buffer.from('"}')]);
      assert.equal(chunked.status, 413);
      const body: unknown = JSON.parse(chunked.text);
      assert.deepEqual(body, { error: 413, message: 'request body exceeds 65536 bytes' });
      assert.equal((await client.call('GET', '/plants', { token: tokenA })).status, 200, 'nothing was stored and the app still serves');
    });

    const wrongTypes: ReadonlyArray<[string, Record<string, string>, RegExp]> = [
      ['text/plain', { 'Content-Type': 'text/plain' }, /unsupported content type text\/plain/],
      ['form data', { 'Content-Type': 'application/x-www-form-urlencoded' }, /unsupported content type/],
      ['no Content-Type', {}, /missing Content-Type/],
      ['a Latin-1 charset', { 'Content-Type': 'application/json; charset=iso-8859-1' }, /unsupported charset/],
      ['a gzip Content-Encoding', { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, /Content-Encoding gzip/],
    ];
    for (const [what, headers, message] of wrongTypes) {
      it(`refuses ${what} with 415`, async () => {
        const res = await client.call('POST', '/plants', { token: tokenA, raw: Buffer.from('{"id":14,"name":"x"}'), headers });
        assert.equal(res.status, 415);
        assert.match((res.body as { message: string }).message, message);
      });
    }

    it('accepts an explicit UTF-8 charset', async () => {
      const res = await client.call('POST', '/plants', { token: tokenA, raw: '{"id":15,"name":"Ivy"}', headers: { 'Content-Type': 'application/json; charset=UTF-8' } });
      assert.equal(res.status, 200);
    });
  });

  describe('int64 ids', () => {
    it('stores and deletes ids at both ends of int64 and around 2^53 exactly', async () => {
      const ids = [INT64_MAX, INT64_MIN, '9007199254740992', '9007199254740993', '0', '-1'];
      for (const id of ids) {
        const res = await client.call('POST', '/plants', { token: STATIC_B, raw: `{"id":${id},"name":"p${id}"}`, headers: { 'Content-Type': 'application/json' } });
        assert.equal(res.status, 200, `create ${id}: ${res.text}`);
      }
      // In id order: each id distinct, 2^53 and 2^53+1 not merged by a double.
      const list = await client.call('GET', '/plants', { token: STATIC_B });
      assert.deepEqual(
        (list.body as Array<{ name: string }>).map((p) => p.name),
        [`p${INT64_MIN}`, 'p-1', 'p0', 'p9007199254740992', 'p9007199254740993', `p${INT64_MAX}`],
      );
      for (const id of ids) {
        const res = await client.call('DELETE', `/plants/${id}`, { token: STATIC_B });
        assert.equal(res.status, 204, `delete ${id}: ${res.text}`);
      }
      assert.deepEqual((await client.call('GET', '/plants', { token: STATIC_B })).body, []);
    });

    it('reads 1e3 and 1000.0 as the integer 1000 (JSON Schema counts them as integers)', async () => {
      assert.equal((await client.call('POST', '/plants', { token: STATIC_B, json: '{"id":1e3,"name":"k"}' })).status, 200);
      const dup = await client.call('POST', '/plants', { token: STATIC_B, json: '{"id":1000.0,"name":"k"}' });
      assert.equal(dup.status, 400);
      assert.match((dup.body as { message: string }).message, /id 1000 already exists/);
      assert.equal((await client.call('DELETE', '/plants/1000', { token: STATIC_B })).status, 204);
    });
  });

  describe('GET /plants', () => {
    before(async () => {
      for (const id of [30, 10, 20]) {
        assert.equal((await client.call('POST', '/plants', { token: tokenB, json: { id, name: `b${id}` } })).status, 200);
      }
    });

    it('returns all of the owner’s plants ordered by id', async () => {
      const res = await client.call('GET', '/plants', { token: tokenB });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, [{ name: 'b10' }, { name: 'b20' }, { name: 'b30' }]);
    });

    const limits: ReadonlyArray<[string, string[]]> = [
      ['1', ['b10']],
      ['2', ['b10', 'b20']],
      ['3', ['b10', 'b20', 'b30']],
      ['0002', ['b10', 'b20']],
      ['2147483647', ['b10', 'b20', 'b30']],
    ];
    for (const [limit, names] of limits) {
      it(`caps the list with limit=${limit}`, async () => {
        const res = await client.call('GET', `/plants?limit=${limit}`, { token: tokenB });
        assert.equal(res.status, 200);
        assert.deepEqual((res.body as Array<{ name: string }>).map((p) => p.name), names);
      });
    }

    const badLimits: ReadonlyArray<[string, RegExp]> = [
      ['0', /at least 1/],
      ['-1', /at least 1/],
      ['abc', /integer of at least 1/],
      ['1.5', /integer of at least 1/],
      ['', /integer of at least 1/],
      ['%201', /integer of at least 1/],
      ['2147483648', /at most 2147483647/],
      ['99999999999999999999999', /at most 2147483647/],
    ];
    for (const [limit, message] of badLimits) {
      it(`refuses limit=${limit} with 400`, async () => {
        const res = await client.call('GET', `/plants?limit=${limit}`, { token: tokenB });
        assert.equal(res.status, 400);
        assert.match((res.body as { message: string }).message, message);
      });
    }

    it('refuses limit given twice with 400', async () => {
      const res = await client.call('GET', '/plants?limit=1&limit=2', { token: tokenB });
      assert.equal(res.status, 400);
      assert.match((res.body as { message: string }).message, /at most once/);
    });

    it('returns an empty array for an owner without plants', async () => {
      const db = store().db;
      const tenant = await db.insertInto('tenants').values({ client_id: 'initech', name: 'Initech' }).returning('id').executeTakeFirstOrThrow();
      const { token } = await issueToken(db, { tenantId: tenant.id, name: 'x', scopes: ['sandbox'] });
      assert.deepEqual((await client.call('GET', '/plants', { token })).body, []);
    });
  });

  describe('DELETE /plants/{id}', () => {
    it('deletes with 204 and an empty body, then 404 for the same id', async () => {
      assert.equal((await client.call('POST', '/plants', { token: tokenA, json: { id: 40, name: 'Cactus' } })).status, 200);
      const res = await client.call('DELETE', '/plants/40', { token: tokenA });
      assert.equal(res.status, 204);
      assert.equal(res.text, '');
      const again = await client.call('DELETE', '/plants/40', { token: tokenA });
      assert.equal(again.status, 404);
      assert.deepEqual(again.body, { error: 404, message: 'plant 40 not found' });
    });

    for (const id of ['abc', '1.5', '1e3', '%20', '9223372036854775808', '-9223372036854775809', '0x10']) {
      it(`refuses id ${id} with 400`, async () => {
        const res = await client.call('DELETE', `/plants/${id}`, { token: tokenA });
        assert.equal(res.status, 400);
        assert.match((res.body as { message: string }).message, /plant id (must be an integer|is outside the int64 range)/);
      });
    }
  });

  describe('owners', () => {
    it('keeps plants apart per owner: the same id in each, invisible and undeletable across owners', async () => {
      for (const token of [STATIC_A, tokenB]) {
        assert.equal((await client.call('POST', '/plants', { token, json: { id: 500, name: `mine-${token === STATIC_A ? 'static' : 'b'}` } })).status, 200);
      }
      assert.equal((await client.call('DELETE', '/plants/500', { token: tokenA })).status, 404);
      const forStatic = (await client.call('GET', '/plants', { token: STATIC_A })).body as Array<{ name: string }>;
      assert.deepEqual(forStatic, [{ name: 'mine-static' }]);
      const forB = (await client.call('GET', '/plants', { token: tokenB })).body as Array<{ name: string }>;
      assert.ok(forB.some((p) => p.name === 'mine-b') && !forB.some((p) => p.name === 'mine-static'));
    });

    it('shares plants between tokens of the same tenant', async () => {
      const viaA2 = (await client.call('GET', '/plants', { token: tokenA2 })).body as Array<{ name: string }>;
      assert.ok(viaA2.some((p) => p.name === 'Monstera'));
    });

    it('stores no static token in clear, only a digest-derived owner key', async () => {
      const owners = await store().db.selectFrom('plants').select(['owner', 'tenant_id']).distinct().execute();
      assert.ok(owners.some((o) => o.owner === `tenant:${tenantA}` && o.tenant_id === tenantA));
      const statics = owners.filter((o) => o.owner.startsWith('static:'));
      assert.ok(statics.length >= 1);
      for (const o of statics) {
        assert.match(o.owner, /^static:[0-9a-f]{64}$/);
        assert.ok(!o.owner.includes(STATIC_A) && !o.owner.includes(STATIC_B));
        assert.equal(o.tenant_id, null);
      }
    });
  });

  describe('authentication', () => {
    const operations: ReadonlyArray<[string, string, unknown]> = [
      ['GET', '/plants', undefined],
      ['POST', '/plants', { id: 900, name: 'x' }],
      ['DELETE', '/plants/1', undefined],
    ];
    for (const [method, path, json] of operations) {
      it(`${method} ${path}: 401 with a Bearer challenge when the token is missing`, async () => {
        const res = await client.call(method, path, { json });
        assert.equal(res.status, 401);
        assert.equal((res.body as { error: number }).error, 401);
        assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="plant-store"');
      });

      it(`${method} ${path}: 401 for revoked, expired, other-scope, unknown and near-miss tokens`, async () => {
        for (const [why, token] of Object.entries(refused)) {
          const res = await client.call(method, path, { token, json });
          assert.equal(res.status, 401, why);
          assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="plant-store", error="invalid_token"', why);
        }
      });

      it(`${method} ${path}: 401 for a non-Bearer or malformed Authorization header`, async () => {
        for (const authorization of ['Basic dXNlcjpwYXNz', `Bearer`, `Bearer ${STATIC_A} extra`, STATIC_A]) {
          const res = await client.call(method, path, { json, headers: { Authorization: authorization } });
          assert.equal(res.status, 401, authorization);
          assert.match((res.body as { message: string }).message, /malformed Authorization/);
        }
      });
    }

    it('checks the token before the body: an unauthenticated oversized or malformed body gets 401', async () => {
      const res = await client.call('POST', '/plants', { json: '{"id":', headers: { Authorization: 'Bearer nope-nope-nope-nope' } });
      assert.equal(res.status, 401);
    });

    it('accepts a configured static token with punctuation outside b64token', async () => {
      assert.equal((await client.call('GET', '/plants', { token: STATIC_PUNCT })).status, 200);
    });

    it('accepts the scheme name in any case (RFC 9110 sec. 11.1)', async () => {
      const res = await client.call('GET', '/plants', { headers: { Authorization: `bearer ${STATIC_A}` } });
      assert.equal(res.status, 200);
    });
  });

  describe('routing and documents', () => {
    it('answers an unknown route with a 404 Error', async () => {
      const res = await client.callUndocumented('GET', '/trees', tokenA);
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { error: 404, message: 'no route for GET /trees' });
    });

    it('answers a wrong method with a 405 Error and an Allow header', async () => {
      const res = await client.callUndocumented('PUT', '/plants', tokenA);
      assert.equal(res.status, 405);
      assert.equal(res.headers.get('allow'), 'GET, HEAD, POST');
      const del = await client.callUndocumented('PATCH', '/plants/1', tokenA);
      assert.equal(del.status, 405);
      assert.equal(del.headers.get('allow'), 'DELETE');
    });

    it('serves its OpenAPI document, version 1.0.0, without a token', async () => {
      const res = await client.call('GET', '/openapi.json');
      assert.equal(res.status, 200);
      const doc = res.body as { openapi: string; info: { version: string }; paths: Record<string, unknown> };
      assert.equal(doc.info.version, '1.0.0');
      assert.equal(doc.openapi, '3.1.0');
      assert.deepEqual(Object.keys(doc.paths).sort(), ['/openapi.json', '/plants', '/plants/{id}']);
    });

    it('serves health and readiness with the database check', async () => {
      const res = await fetch(`${client.baseUrl}/readyz`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { status: 'ready', checks: { database: 'ok' } });
    });
  });
});
