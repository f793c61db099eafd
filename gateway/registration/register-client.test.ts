import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeClock } from '../../core/clock.js';
import { UdpPeer } from '../../test/gateway/udp-peer.js';
import { digestResponse, ha1Of, hashOf } from '../sip/auth/digest.js';
import { parseAuthValue } from '../sip/auth/auth-params.js';
import type { SipRequest } from '../sip/message/message.js';
import { TransportSet } from '../sip/transport/transport-set.js';
import { SipStack } from '../sip/ua/sip-stack.js';
import { RegisterClient, type RegistrationSnapshot } from './register-client.js';

/** The registrar's answer to one REGISTER, as text. */
function answer(req: SipRequest, status: string, extra: string[] = []): string {
  const h = (n: string): string => req.headers.getAll(n).map((v) => `${n}: ${v}`).join('\r\n');
  return [`SIP/2.0 ${status}`, h('via'), h('from'), `To: ${req.headers.get('to')};tag=reg`, h('call-id'), h('cseq'), ...extra, 'Content-Length: 0', '', ''].join('\r\n');
}

/** Checks a digest answer the way a registrar does (RFC 7616 sec. 3.4.1). */
function validDigest(req: SipRequest, password: string): boolean {
  const raw = req.headers.get('authorization');
  if (!raw) return false;
  const p = parseAuthValue(raw).params;
  const algorithm = 'SHA-256';
  const expected = digestResponse({
    algorithm,
    ha1: ha1Of(hashOf(algorithm), p.get('username') ?? '', p.get('realm') ?? '', password),
    method: 'REGISTER',
    uri: p.get('uri') ?? '',
    nonce: p.get('nonce') ?? '',
    qop: 'auth',
    nc: p.get('nc') ?? '',
    cnonce: p.get('cnonce') ?? '',
  });
  return expected === p.get('response');
}

describe('RegisterClient over a real stack (FakeClock: refresh and backoff without waiting)', function () {
  this.timeout(20_000);
  let clock: FakeClock;
  let stack: SipStack;
  let transports: TransportSet;
  let registrar: UdpPeer;
  let client: RegisterClient | undefined;
  let seen: RegistrationSnapshot[];

  beforeEach(async () => {
    clock = new FakeClock(1_000_000);
    stack = new SipStack({ clock, logger: pino({ level: 'silent' }), publicAddress: '127.0.0.1' });
    transports = await TransportSet.start({ host: '127.0.0.1', port: 0, tcpPort: 0 }, stack.receive);
    stack.attach(transports);
    registrar = await UdpPeer.open();
    seen = [];
  });
  afterEach(async () => {
    await client?.stop(0);
    registrar.close();
    await transports.close();
  });

  const start = (targets = async () => [stack.flowFor(`sip:127.0.0.1:${registrar.port}`)]): RegisterClient => {
    client = new RegisterClient({
      stack,
      clock,
      logger: pino({ level: 'silent' }),
      target: { domain: 'carrier.example', user: 'alice', transport: 'udp', credentials: { username: 'alice', password: 's3cret' } },
      policy: { expiresSeconds: 60, credentials: true, contactUser: 'r-test', backoffBaseSeconds: 30, backoffMaxSeconds: 1800 },
      targets,
      onChange: (s) => seen.push(s),
      random: () => 1,
    });
    client.start();
    return client;
  };

  /** The n-th REGISTER the registrar got (1-based). */
  const register = async (n: number): Promise<SipRequest> => {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const all = registrar.got.filter((g) => g.msg?.isRequest).map((g) => g.msg as SipRequest);
      if (all.length >= n) return all[n - 1] as SipRequest;
      if (Date.now() > deadline) throw new Error(`REGISTER ${n} never came (got ${all.length})`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const until = async (state: string): Promise<void> => {
    const deadline = Date.now() + 5_000;
    while (client?.name !== state) {
      if (Date.now() > deadline) throw new Error(`state ${client?.name}, not ${state}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  it('registers through a digest challenge, refreshes before expiry with the next CSeq, and un-registers on stop', async () => {
    const c = start();
    const first = await register(1);
    assert.equal(first.uri, 'sip:carrier.example');
    assert.equal(first.headers.get('to'), '<sip:alice@carrier.example>');
    assert.equal(first.headers.get('expires'), '60');
    assert.match(first.headers.get('contact') ?? '', /^<sip:r-test@127\.0\.0\.1:\d+>$/);
    assert.equal(first.headers.has('authorization'), false);
    registrar.send(transports.ports.UDP as number, answer(first, '401 Unauthorized', ['WWW-Authenticate: Digest realm="carrier.example", nonce="abc", algorithm=SHA-256, qop="auth"']));
    const second = await register(2);
    assert.equal(second.cseq.seq, first.cseq.seq + 1);
    assert.equal(second.callId, first.callId);
    assert.ok(validDigest(second, 's3cret'), 'the Authorization answers the challenge with the trunk password');
    registrar.send(transports.ports.UDP as number, answer(second, '200 OK', [`Contact: ${second.headers.get('contact')};expires=60`]));
    await until('registered');
    assert.equal(c.snapshot().expiresAt, clock.now() + 60_000);

    // Sec. 10.2.1.1: the refresh goes before the binding expires (at 30 s of 60), credentials pre-emptively.
    clock.advance(29_000);
    assert.equal(registrar.got.length, 2);
    clock.advance(1_000);
    const refresh = await register(3);
    assert.equal(refresh.cseq.seq, second.cseq.seq + 1);
    assert.ok(validDigest(refresh, 's3cret'));
    registrar.send(transports.ports.UDP as number, answer(refresh, '200 OK', [`Contact: ${refresh.headers.get('contact')};expires=60`]));
    await until('registered');
    assert.equal(c.snapshot().successes, 2);

    const stopping = c.stop();
    const bye = await register(4);
    assert.equal(bye.headers.get('expires'), '0');
    registrar.send(transports.ports.UDP as number, answer(bye, '200 OK'));
    await stopping;
    assert.equal(c.name, 'stopped');
  });

  it('backs off after a 500, doubling the wait, and registers on the retry', async () => {
    const c = start();
    const first = await register(1);
    registrar.send(transports.ports.UDP as number, answer(first, '500 Server Error'));
    await until('backing-off');
    assert.equal(c.snapshot().lastError, '500 Server Error');
    assert.equal(c.snapshot().retryAt, clock.now() + 30_000);
    clock.advance(30_000);
    const second = await register(2);
    registrar.send(transports.ports.UDP as number, answer(second, '503 Service Unavailable'));
    await until('backing-off');
    assert.equal(c.snapshot().retryAt, clock.now() + 60_000, 'the second wait is twice the first (RFC 5626 sec. 4.5)');
    clock.advance(60_000);
    const third = await register(3);
    registrar.send(transports.ports.UDP as number, answer(third, '200 OK', ['Expires: 120']));
    await until('registered');
    assert.equal(c.snapshot().lastError, undefined);
    assert.ok(seen.some((s) => s.state === 'backing-off') && seen.at(-1)?.state === 'registered');
  });

  it('asks the targets again before every REGISTER: a registrar that moved is followed', async () => {
    const other = await UdpPeer.open();
    let current = registrar;
    try {
      start(async () => [stack.flowFor(`sip:127.0.0.1:${current.port}`)]);
      const first = await register(1);
      registrar.send(transports.ports.UDP as number, answer(first, '200 OK', ['Expires: 60']));
      await until('registered');
      current = other;
      clock.advance(30_000);
      const deadline = Date.now() + 5_000;
      while (!other.got.some((g) => g.msg?.isRequest)) {
        if (Date.now() > deadline) throw new Error('the refresh did not go to the new address');
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      other.close();
    }
  });

  it('an unresolvable registrar backs off with the cause', async () => {
    const c = start(async () => {
      throw new Error('queryA ENOTFOUND carrier.example');
    });
    await until('backing-off');
    assert.match(c.snapshot().lastError ?? '', /registrar not resolved: queryA ENOTFOUND/);
  });
});
