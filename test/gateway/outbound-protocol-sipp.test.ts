import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { pino } from 'pino';
import { systemClock } from '../../core/clock.js';
import type { OriginateRequest, OriginateResult } from '../../core/ports/originator.js';
import type { OutboundTrunkRoute, TrunkRoutes } from '../../core/ports/trunk-routes.js';
import { SipOriginator, type SipOriginatorOptions } from '../../gateway/outbound/sip-originator.js';
import { SipResolver } from '../../gateway/sip/resolve/sip-resolver.js';
import { metricValue } from '../helpers/metric-value.js';
import { a, LoopbackDns, naptr, srv } from './loopback-dns.js';
import { startGatewayFixture, type GatewayFixture } from './gateway-harness.js';
import { expectSippUasSuccess, outboundRequest, startSippUas } from './outbound-sipp-uas.js';

/**
 * Outbound protocol extensions carriers expect, against SIPp as the trunk: RFC 4028 session timers
 * (the callee makes us refresher; no UPDATE in its Allow, so we refresh with a re-INVITE) and
 * RFC 3262 reliable provisionals (a 183 with Require: 100rel must be PRACKed before the 200).
 */
describe('gateway: outbound session timers and PRACK with SIPp', function () {
  this.timeout(60_000);
  let fx: GatewayFixture;
  const routes = new Map<string, OutboundTrunkRoute>();
  const trunks: TrunkRoutes = { outboundRoute: async (id) => routes.get(id) };

  before(async () => {
    fx = await startGatewayFixture();
  });
  after(async () => {
    await fx?.close();
  });

  const originator = (extra: Partial<SipOriginatorOptions> = {}): SipOriginator =>
    new SipOriginator({
      stack: fx.gateway.stack,
      media: fx.media,
      trunks,
      registry: fx.gateway.registry,
      clock: systemClock,
      logger: pino({ level: process.env.GATEWAY_TEST_LOG ?? 'silent' }),
      // Min-SE 2 s so the refresh falls due within the test (configuration keeps the RFC's 90 s floor).
      sessionTimer: { intervalSeconds: 4, minSeSeconds: 2 },
      ...extra,
    });

  const trunkTo = (host: string, port: number): string => {
    const id = `trunk-${routes.size + 1}`;
    routes.set(id, { trunkId: id, tenantId: fx.ids.tenantId, host, port, transport: 'udp' });
    return id;
  };

  const request = (trunkId: string, extra: Partial<OriginateRequest> = {}): OriginateRequest => outboundRequest(fx.ids.tenantId, trunkId, extra);

  const sippOk = expectSippUasSuccess;

  it('asks for a session timer, and as refresher re-INVITEs with the same SDP at half the interval (RFC 4028 sec. 7, 10)', async () => {
    const uas = await startSippUas('uas-session-timer-reinvite.xml');
    const result = await originator().originate(request(trunkTo('127.0.0.1', uas.port)));
    if (result.outcome !== 'answered') uas.stop();
    assert.equal(result.outcome, 'answered', JSON.stringify(result));
    const completion = await (result as Extract<OriginateResult, { outcome: 'answered' }>).completion;
    assert.equal(completion.reason, 'remote-bye');
    assert.ok(completion.durationMs >= 2000, `the call lasted past the refresh: ${completion.durationMs} ms`);
    const sipp = await uas.done;
    sippOk(sipp);
    assert.match(sipp.messages, /Supported: timer, 100rel/);
    assert.match(sipp.messages, /Session-Expires: 4\r?\n/);
    assert.match(sipp.messages, /Min-SE: 2/);
    const invites = sipp.messages.match(/^INVITE sip:/gm) ?? [];
    assert.equal(invites.length, 2, 'the INVITE and one refresh re-INVITE');
  });

  it('retries a 422 as often as each one raises the Min-SE (two proxies on the path, RFC 4028 sec. 3, 7.4)', async () => {
    const uas = await startSippUas('uas-session-timer-422-twice.xml');
    const result = await originator().originate(request(trunkTo('127.0.0.1', uas.port)));
    if (result.outcome !== 'answered') uas.stop();
    assert.equal(result.outcome, 'answered', JSON.stringify(result));
    assert.equal((await (result as Extract<OriginateResult, { outcome: 'answered' }>).completion).reason, 'remote-bye');
    const sipp = await uas.done;
    sippOk(sipp);
    assert.deepEqual(sipp.messages.match(/^CSeq: \d+ INVITE/gm)?.filter((l, i, all) => all.indexOf(l) === i), ['CSeq: 1 INVITE', 'CSeq: 2 INVITE', 'CSeq: 3 INVITE']);
  });

  it('PRACKs a reliable 183 (RAck = RSeq, INVITE CSeq) before the 200, and the call goes through (RFC 3262 sec. 4)', async () => {
    const uas = await startSippUas('uas-183-100rel.xml');
    let rang = 0;
    const result = await originator().originate(request(trunkTo('127.0.0.1', uas.port), { onRinging: () => rang++ }));
    if (result.outcome !== 'answered') uas.stop();
    assert.equal(result.outcome, 'answered', JSON.stringify(result));
    assert.equal(rang, 1);
    const completion = await (result as Extract<OriginateResult, { outcome: 'answered' }>).completion;
    assert.equal(completion.reason, 'remote-bye');
    const sipp = await uas.done;
    sippOk(sipp);
    assert.match(sipp.messages, /PRACK sip:callee@127\.0\.0\.1:\d+/);
    assert.match(sipp.messages, /RAck: 1 1 INVITE/);
    const prackCseq = Number(/CSeq: (\d+) PRACK/.exec(sipp.messages)?.[1]);
    assert.equal(prackCseq, 2, 'the PRACK continues the INVITE CSeq in the early dialog');
  });

  it('recomputes the route set from the 2xx that confirms an early dialog made by a reliable 183 (RFC 3261 sec. 13.2.2.4)', async () => {
    const uas = await startSippUas('uas-183-100rel-record-route.xml');
    const abort = new AbortController();
    const result = await originator().originate(request(trunkTo('127.0.0.1', uas.port), { signal: abort.signal }));
    if (result.outcome !== 'answered') uas.stop();
    assert.equal(result.outcome, 'answered', JSON.stringify(result));
    abort.abort(); // our BYE, along the dialog's route set
    assert.equal((await (result as Extract<OriginateResult, { outcome: 'answered' }>).completion).reason, 'aborted');
    const sipp = await uas.done;
    // SIPp checks the Route of PRACK (early=1), ACK and BYE (confirmed=1) itself; a wrong one fails it.
    sippOk(sipp);
    const routes = (method: string): string[] => [...sipp.messages.matchAll(new RegExp(`^${method} sip:[^]*?^Route: (.*)$`, 'gm'))].map((m) => m[1] ?? '');
    assert.deepEqual(routes('ACK').map((r) => /;(early|confirmed)=1/.exec(r)?.[1]), ['confirmed']);
    assert.deepEqual(routes('BYE').map((r) => /;(early|confirmed)=1/.exec(r)?.[1]), ['confirmed']);
  });

  it('PRACKs each new RSeq once: a repeated reliable 183 is not PRACKed, the next RSeq (180) is (RFC 3262 sec. 4)', async () => {
    const uas = await startSippUas('uas-100rel-sequence.xml');
    const result = await originator().originate(request(trunkTo('127.0.0.1', uas.port)));
    if (result.outcome !== 'answered') uas.stop();
    assert.equal(result.outcome, 'answered', JSON.stringify(result));
    await (result as Extract<OriginateResult, { outcome: 'answered' }>).completion;
    const sipp = await uas.done;
    sippOk(sipp);
    assert.deepEqual(sipp.messages.match(/RAck: \d+ 1 INVITE/g), ['RAck: 1 1 INVITE', 'RAck: 2 1 INVITE']);
    // Request and 200 of each PRACK carry the same CSeq: the dialog's CSeq goes 2, 3 after the INVITE's 1.
    assert.deepEqual([...new Set(sipp.messages.match(/CSeq: \d+ PRACK/g))], ['CSeq: 2 PRACK', 'CSeq: 3 PRACK']);
  });

  it('resolves a trunk FQDN by NAPTR, SRV and A on a loopback DNS server, and fails over from a 503 to the next SRV target (RFC 3263 sec. 4.1, 4.3)', async () => {
    const refusing = await startSippUas('uas-503.xml');
    const answering = await startSippUas('uas-answer.xml');
    const dns = await LoopbackDns.start({
      'trunk.test': { NAPTR: [naptr('trunk.test', 10, 10, 'SIP+D2U', '_sip._udp.trunk.test')] },
      '_sip._udp.trunk.test': {
        SRV: [srv('_sip._udp.trunk.test', 'backup.trunk.test', answering.port, 20), srv('_sip._udp.trunk.test', 'primary.trunk.test', refusing.port, 10)],
      },
      'primary.trunk.test': { A: [a('primary.trunk.test', '127.0.0.1')] },
      'backup.trunk.test': { A: [a('backup.trunk.test', '127.0.0.1')] },
    });
    try {
      const resolver = new SipResolver({ servers: [dns.server], timeoutMs: 1000, tries: 1 });
      const result = await originator({ resolver }).originate(request(trunkTo('trunk.test', 5060)));
      if (result.outcome !== 'answered') answering.stop();
      assert.equal(result.outcome, 'answered', JSON.stringify(result));
      await (result as Extract<OriginateResult, { outcome: 'answered' }>).completion;
      const first = await refusing.done;
      const second = await answering.done;
      sippOk(first);
      sippOk(second);
      // The Request-URI keeps the trunk's name (no port: the default one), only the address came from DNS.
      assert.match(first.messages, /INVITE sip:\+919812345678@trunk\.test;user=phone SIP\/2\.0/);
      assert.match(second.messages, /INVITE sip:\+919812345678@trunk\.test;user=phone SIP\/2\.0/);
      assert.deepEqual(dns.queries.map((q) => `${q.type} ${q.name}`).slice(0, 2), ['NAPTR trunk.test', 'SRV _sip._udp.trunk.test']);
      // Sec. 4.3: the same request (Call-ID, From tag, CSeq) on a new transaction (new Via branch).
      const [refused, answered] = [firstInvite(first.messages), firstInvite(second.messages)];
      assert.deepEqual([answered.callId, answered.fromTag, answered.cseq], [refused.callId, refused.fromTag, refused.cseq]);
      assert.equal(answered.cseq, '1 INVITE');
      assert.notEqual(answered.branch, refused.branch);
    } finally {
      await dns.close();
    }
  });

  it('fails over from a UDP target that never answers (Timer B, 64*T1) to the next SRV target (sec. 4.3)', async () => {
    // Its own gateway with T1 = 50 ms, so the silent target times out after 3.2 s.
    const fast = await startGatewayFixture({ timers: { T1: 50, T2: 400, T4: 500 } });
    const answering = await startSippUas('uas-answer.xml');
    const silent = await silentUdpPort();
    const dns = await LoopbackDns.start({
      'silent.test': { A: [a('silent.test', '127.0.0.1')] },
      '_sip._udp.silent.test': { SRV: [srv('_sip._udp.silent.test', 'silent.test', silent.port, 10), srv('_sip._udp.silent.test', 'silent.test', answering.port, 20)] },
    });
    try {
      const resolver = new SipResolver({ servers: [dns.server], timeoutMs: 1000, tries: 1 });
      const timerB = await metricValue('vap_sip_transaction_timeouts_total', { timer: 'B', method: 'INVITE' });
      const started = Date.now();
      const result = await new SipOriginator({
        stack: fast.gateway.stack,
        media: fast.media,
        trunks,
        registry: fast.gateway.registry,
        clock: systemClock,
        logger: pino({ level: process.env.GATEWAY_TEST_LOG ?? 'silent' }),
        resolver,
        // The ring timeout (2 s) fires before Timer B (3.2 s): a target that never answered still fails over.
      }).originate(request(trunkTo('silent.test', 5060), { ringTimeoutMs: 2000 }));
      if (result.outcome !== 'answered') answering.stop();
      assert.equal(result.outcome, 'answered', JSON.stringify(result));
      assert.ok(Date.now() - started >= 3000, 'the first target was given Timer B');
      assert.equal(await metricValue('vap_sip_transaction_timeouts_total', { timer: 'B', method: 'INVITE' }), timerB + 1, 'its Timer B counted');
      assert.ok(silent.received() >= 2, `the silent target saw the INVITE and its retransmissions (${silent.received()})`);
      await (result as Extract<OriginateResult, { outcome: 'answered' }>).completion;
      const sipp = await answering.done;
      sippOk(sipp);
      // A callee the silent target did reach would see the same request again, not a second call.
      const lost = firstInvite(silent.messages()[0] ?? '');
      const answered = firstInvite(sipp.messages);
      assert.deepEqual([answered.callId, answered.fromTag, answered.cseq], [lost.callId, lost.fromTag, lost.cseq]);
      assert.notEqual(answered.branch, lost.branch);
    } finally {
      silent.close();
      await dns.close();
      await fast.close();
    }
  });

  it('does not fail over on a 408 the callee sent after ringing: only a transaction timeout is a dead target (sec. 4.3)', async () => {
    const ringing = await startSippUas('uas-180-408.xml');
    const next = await silentUdpPort();
    const dns = await LoopbackDns.start({
      'noanswer.test': { A: [a('noanswer.test', '127.0.0.1')] },
      '_sip._udp.noanswer.test': { SRV: [srv('_sip._udp.noanswer.test', 'noanswer.test', ringing.port, 10), srv('_sip._udp.noanswer.test', 'noanswer.test', next.port, 20)] },
    });
    try {
      const resolver = new SipResolver({ servers: [dns.server], timeoutMs: 1000, tries: 1 });
      const result = await originator({ resolver }).originate(request(trunkTo('noanswer.test', 5060)));
      const { sipCallId, ...rest } = result as Exclude<OriginateResult, { outcome: 'answered' }>;
      assert.deepEqual(rest, { outcome: 'no-answer', sipStatus: 408, reason: 'Request Timeout' });
      assert.match(String(sipCallId), /.+/, 'the Call-ID of the INVITE both targets got');
      sippOk(await ringing.done);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(next.received(), 0, 'the callee was not rung again through the next target');
    } finally {
      next.close();
      await dns.close();
    }
  });
});

/** A loopback UDP port that takes datagrams and never answers. */
async function silentUdpPort(): Promise<{ port: number; received: () => number; messages: () => string[]; close: () => void }> {
  const socket = createSocket('udp4');
  const got: string[] = [];
  socket.on('message', (m) => got.push(m.toString('utf8')));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { port: socket.address().port, received: () => got.length, messages: () => [...got], close: () => socket.close() };
}

/** Call-ID, From tag, CSeq and top Via branch of the first INVITE in a message or SIPp message log. */
function firstInvite(text: string): { callId: string; fromTag: string; cseq: string; branch: string } {
  const start = text.indexOf('INVITE sip:');
  assert.ok(start >= 0, 'an INVITE was received');
  const msg = text.slice(start).split(/\r?\n\r?\n/)[0] ?? '';
  const header = (name: string): string | undefined => new RegExp(`^${name}:\\s*(.*?)\\s*$`, 'im').exec(msg)?.[1];
  const ids = {
    callId: header('Call-ID'),
    fromTag: /;tag=([^;>\s]+)/.exec(header('From') ?? '')?.[1],
    cseq: header('CSeq'),
    branch: /;branch=([^;\s]+)/.exec(header('Via') ?? '')?.[1],
  };
  assert.ok(ids.callId && ids.fromTag && ids.cseq && ids.branch, `INVITE identifiers missing in:\n${msg}`);
  return ids as { callId: string; fromTag: string; cseq: string; branch: string };
}
