import assert from 'node:assert/strict';
import { FakeClock } from '../../../core/clock.js';
import { Headers, SipRequest, SipResponse, createResponse, parseDatagram, serialize } from '../message/index.js';
import { loadTortureMessage } from '../../../test/sip-torture/load-fixture.js';
import {
  DigestClient,
  DigestServer,
  digestEquals,
  digestResponse,
  ha1Of,
  parseAuthValue,
  parseChallenge,
  type DigestSecret,
} from './index.js';

// RFC 7616 sec. 3.9.1 (Mufasa / "Circle of Life").
const rfc7616 = {
  realm: 'http-auth@example.org',
  nonce: '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v',
  cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ',
  opaque: 'FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS',
};

const responseParam = (value: string): string | undefined => parseAuthValue(value).params.get('response');

describe('digest computation (RFC 7616 sec. 3.4)', () => {
  it('matches the RFC 7616 sec. 3.9.1 MD5 and SHA-256 examples', () => {
    for (const [algorithm, expected] of [
      ['MD5', '8ca523f5e9506fed4657c9700eebdbec'],
      ['SHA-256', '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1'],
    ] as const) {
      const challenge = parseChallenge(
        `Digest realm="${rfc7616.realm}", qop="auth, auth-int", algorithm=${algorithm}, nonce="${rfc7616.nonce}", opaque="${rfc7616.opaque}"`,
      );
      assert.ok(challenge);
      const value = new DigestClient({ username: 'Mufasa', password: 'Circle of Life' }).authorize(challenge, {
        method: 'GET',
        uri: '/dir/index.html',
        cnonce: rfc7616.cnonce,
      });
      assert.equal(responseParam(value), expected, algorithm);
      const p = parseAuthValue(value).params;
      assert.equal(p.get('nc'), '00000001');
      assert.equal(p.get('qop'), 'auth');
      assert.equal(p.get('opaque'), rfc7616.opaque);
      assert.match(value, /algorithm=SHA-256|algorithm=MD5/);
    }
  });

  it('matches the RFC 2617 sec. 3.5 example', () => {
    const response = digestResponse({
      algorithm: 'MD5',
      ha1: ha1Of('MD5', 'Mufasa', 'testrealm@host.com', 'Circle Of Life'),
      method: 'GET',
      uri: '/dir/index.html',
      nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
      qop: 'auth',
      nc: '00000001',
      cnonce: '0a4f113b',
    });
    assert.equal(response, '6629fae49393a05397450978507c4ef1');
  });

  it('compares digests by content only', () => {
    assert.ok(digestEquals('ABCdef', 'abcDEF'));
    assert.equal(digestEquals('abc', 'abcd'), false);
    assert.equal(digestEquals('abce', 'abcd'), false);
  });
});

function register(authorization?: string[]): SipRequest {
  const h = new Headers([
    ['Via', 'SIP/2.0/UDP 192.0.2.1;branch=z9hG4bK1'],
    ['From', '<sip:alice@example.com>;tag=1'],
    ['To', '<sip:alice@example.com>'],
    ['Call-ID', 'reg1'],
    ['CSeq', '1 REGISTER'],
  ]);
  for (const a of authorization ?? []) h.append('Authorization', a);
  return new SipRequest('REGISTER', 'sip:example.com', h);
}

describe('digest server and client together (RFC 3261 sec. 22, RFC 8760)', () => {
  const secret = Buffer.from('0123456789abcdef0123456789abcdef');
  const users: Record<string, DigestSecret> = { alice: { password: 'wonderland' } };
  const lookup = (u: string): DigestSecret | undefined => users[u];
  let clock: FakeClock;
  let server: DigestServer;

  beforeEach(() => {
    clock = new FakeClock(Date.UTC(2026, 0, 1));
    server = new DigestServer({ realm: 'example.com', secret, clock, nonceTtlMs: 60_000 });
  });

  function challenged(stale = false): SipResponse {
    const res = createResponse(register(), 401);
    for (const c of server.challenge({ stale })) res.headers.append('WWW-Authenticate', c);
    return res;
  }

  function authorized(client: DigestClient, res = challenged()): SipRequest {
    const answer = client.answer(register(), res);
    assert.ok(answer);
    assert.equal(answer.name, 'Authorization');
    return register(answer.values);
  }

  const verify = (req: SipRequest) =>
    server.verify({ method: req.method, uri: req.uri, credentials: req.headers.getAll('authorization') }, lookup);

  it('offers SHA-256 then MD5 with qop=auth, and the client picks SHA-256', async () => {
    const res = challenged();
    const offers = res.headers.getAll('www-authenticate').map((v) => parseChallenge(v)?.algorithm);
    assert.deepEqual(offers, ['SHA-256', 'MD5']);
    const req = authorized(new DigestClient({ username: 'alice', password: 'wonderland' }), res);
    assert.match(req.headers.get('authorization') ?? '', /algorithm=SHA-256/);
    assert.deepEqual(await verify(req), { ok: true, username: 'alice', algorithm: 'SHA-256' });
  });

  it('survives the wire: challenge and credentials parse back from serialized messages', async () => {
    const res = parseDatagram(serialize(challenged()));
    assert.ok(res instanceof SipResponse);
    const req = parseDatagram(serialize(authorized(new DigestClient({ username: 'alice', password: 'wonderland' }), res)));
    assert.ok(req instanceof SipRequest);
    assert.equal((await verify(req)).ok, true);
  });

  it('rejects a wrong password, an unknown user and a forged nonce', async () => {
    assert.deepEqual(await verify(authorized(new DigestClient({ username: 'alice', password: 'nope' }))), {
      ok: false,
      reason: 'bad-response',
      username: 'alice',
    });
    const unknown = await verify(authorized(new DigestClient({ username: 'mallory', password: 'x' })));
    assert.equal(unknown.ok === false && unknown.reason, 'unknown-user');
    const good = authorized(new DigestClient({ username: 'alice', password: 'wonderland' }));
    const value = good.headers.get('authorization') ?? '';
    const nonce = parseAuthValue(value).params.get('nonce') ?? '';
    const forged = `${nonce.slice(0, -2)}${nonce.endsWith('AA') ? 'AB' : 'AA'}`;
    const result = await verify(register([value.replace(nonce, forged)]));
    assert.equal(result.ok === false && result.reason, 'bad-nonce');
  });

  it('answers an expired nonce with stale, and a stale challenge says so', async () => {
    const req = authorized(new DigestClient({ username: 'alice', password: 'wonderland' }));
    clock.advance(60_001);
    const result = await verify(req);
    assert.equal(result.ok === false && result.reason, 'stale');
    const again = challenged(true).headers.getAll('www-authenticate');
    assert.ok(again.every((c) => parseChallenge(c)?.stale === true));
  });

  it('refuses a replayed nonce count and accepts the next one', async () => {
    const client = new DigestClient({ username: 'alice', password: 'wonderland' });
    const res = challenged();
    const first = authorized(client, res);
    assert.equal((await verify(first)).ok, true);
    const replay = await verify(first);
    assert.equal(replay.ok === false && replay.reason, 'replay');
    const second = authorized(client, res);
    assert.match(second.headers.get('authorization') ?? '', /nc=00000002/);
    assert.equal((await verify(second)).ok, true);
  });

  it('verifies against stored HA1 values instead of passwords', async () => {
    users.bob = { ha1: { 'SHA-256': ha1Of('SHA-256', 'bob', 'example.com', 'builder') } };
    const req = authorized(new DigestClient({ username: 'bob', password: 'builder' }));
    assert.equal((await verify(req)).ok, true);
  });

  it('supports SHA-512-256 when configured', async () => {
    server = new DigestServer({ realm: 'example.com', secret, clock, algorithms: ['SHA-512-256'] });
    const req = authorized(new DigestClient({ username: 'alice', password: 'wonderland' }));
    assert.deepEqual(await verify(req), { ok: true, username: 'alice', algorithm: 'SHA-512-256' });
  });

  it('ignores other realms and schemes (RFC 4475 sec. 3.3.7: unknown scheme gets a challenge)', async () => {
    const regaut01 = parseDatagram(loadTortureMessage('regaut01'));
    const unknownScheme = await server.verify(
      { method: 'REGISTER', uri: 'sip:example.com', credentials: regaut01.headers.getAll('authorization') },
      lookup,
    );
    assert.deepEqual(unknownScheme, { ok: false, reason: 'unsupported-scheme' });
    const other = new DigestServer({ realm: 'elsewhere.example', secret, clock });
    const otherChallenge = parseChallenge(other.challenge()[0] ?? '');
    assert.ok(otherChallenge);
    const foreign = new DigestClient({ username: 'alice', password: 'wonderland' }).authorize(otherChallenge, {
      method: 'REGISTER',
      uri: 'sip:example.com',
    });
    const result = await verify(register([foreign]));
    assert.equal(result.ok === false && result.reason, 'wrong-realm');
    assert.deepEqual(await verify(register()), { ok: false, reason: 'missing' });
  });

  it('answers a 407 with Proxy-Authorization and checks the digest uri', async () => {
    const res = createResponse(register(), 407);
    for (const c of server.challenge()) res.headers.append('Proxy-Authenticate', c);
    const answer = new DigestClient({ username: 'alice', password: 'wonderland' }).answer(register(), res);
    assert.equal(answer?.name, 'Proxy-Authorization');
    const result = await server.verify({ method: 'REGISTER', uri: 'sip:other.example.com', credentials: answer?.values ?? [] }, lookup);
    assert.equal(result.ok === false && result.reason, 'uri-mismatch');
  });

  it('never throws on garbage credentials, only refuses them', async () => {
    const good = authorized(new DigestClient({ username: 'alice', password: 'wonderland' })).headers.get('authorization') ?? '';
    let seed = 7;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const junk = ['"', ',', '=', '\\', ' ', 'Digest', 'nc=', 'realm="example.com"', '\u0000', 'algorithm=SHA-256'];
    for (let i = 0; i < 2000; i++) {
      let v = good;
      for (let e = 0; e < 1 + rnd(4); e++) {
        const at = rnd(v.length + 1);
        v = rnd(2) ? v.slice(0, at) + junk[rnd(junk.length)] + v.slice(at) : v.slice(0, at) + v.slice(at + 1 + rnd(10));
      }
      const result = await verify(register([v]));
      // Only a rewrite that means the same (say, a dropped space) may pass.
      if (result.ok) assert.deepEqual(parseAuthValue(v).params, parseAuthValue(good).params);
      assert.ok(parseChallenge(v) === undefined || typeof parseChallenge(v)?.nonce === 'string');
    }
  });
});
