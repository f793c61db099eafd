import assert from 'node:assert/strict';
import { a, aaaa, LoopbackDns, naptr, srv } from '../../../test/gateway/loopback-dns.js';
import { FakeClock } from '../../../core/clock.js';
import { orderSrv, SipResolver } from './sip-resolver.js';

/** RFC 3263 sec. 4 against a real DNS server on 127.0.0.1 (dns-packet), through node:dns's Resolver. */
describe('SipResolver (RFC 3263) against a loopback DNS server', function () {
  this.timeout(10_000);
  let dns: LoopbackDns;
  let resolver: SipResolver;

  before(async () => {
    dns = await LoopbackDns.start({
      // NAPTR prefers TCP (order 10) over UDP (order 20); each SRV name has two targets.
      'carrier.test': {
        NAPTR: [naptr('carrier.test', 20, 10, 'SIP+D2U', '_sip._udp.carrier.test'), naptr('carrier.test', 10, 10, 'SIP+D2T', '_sip._tcp.carrier.test'), { ...naptr('carrier.test', 5, 10, 'E2U+sip', 'x.carrier.test') }],
        A: [a('carrier.test', '127.0.0.9')],
      },
      '_sip._tcp.carrier.test': { SRV: [srv('_sip._tcp.carrier.test', 'b.carrier.test', 5080, 20), srv('_sip._tcp.carrier.test', 'a.carrier.test', 5070, 10)] },
      '_sip._udp.carrier.test': { SRV: [srv('_sip._udp.carrier.test', 'a.carrier.test', 5090, 10)] },
      'a.carrier.test': { A: [a('a.carrier.test', '127.0.0.11')], AAAA: [aaaa('a.carrier.test', '::1')] },
      'b.carrier.test': { A: [a('b.carrier.test', '127.0.0.12')] },
      // No NAPTR: SRV for _sip._udp only.
      'srvonly.test': { A: [a('srvonly.test', '127.0.0.20')] },
      '_sip._udp.srvonly.test': { SRV: [srv('_sip._udp.srvonly.test', 'srvonly.test', 5999)] },
      // Neither: A on the default port.
      'plain.test': { A: [a('plain.test', '127.0.0.30')] },
      // "." target: service not offered over UDP here (RFC 2782).
      'none.test': { A: [a('none.test', '127.0.0.40')] },
      '_sip._udp.none.test': { SRV: [srv('_sip._udp.none.test', '.', 0)] },
    });
    resolver = new SipResolver({ servers: [dns.server], timeoutMs: 1000, tries: 1, random: () => 0 });
  });
  after(async () => {
    await dns.close();
  });

  it('follows NAPTR by order, then SRV by priority, then A and AAAA (sec. 4.1, 4.2)', async () => {
    const targets = await resolver.resolve('carrier.test');
    assert.deepEqual(
      targets.map((t) => `${t.transport} ${t.address} ${t.port}`),
      ['tcp 127.0.0.11 5070', 'tcp ::1 5070', 'tcp 127.0.0.12 5080', 'udp 127.0.0.11 5090', 'udp ::1 5090'],
    );
  });

  it('keeps only the NAPTR records of a transport the URI names', async () => {
    const targets = await resolver.resolve('carrier.test', { transport: 'udp' });
    assert.deepEqual(targets.map((t) => `${t.transport} ${t.address} ${t.port}`), ['udp 127.0.0.11 5090', 'udp ::1 5090']);
  });

  it('with a port in the URI looks up A/AAAA only, no NAPTR or SRV (sec. 4.2)', async () => {
    const before = dns.queries.length;
    const targets = await resolver.resolve('carrier.test', { port: 5062, transport: 'tcp' });
    assert.deepEqual(targets.map((t) => `${t.transport} ${t.address} ${t.port}`), ['tcp 127.0.0.9 5062']);
    assert.deepEqual(new Set(dns.queries.slice(before).map((q) => q.type)), new Set(['A', 'AAAA']));
  });

  it('without NAPTR tries SRV per transport, and without SRV A on the default port', async () => {
    assert.deepEqual((await resolver.resolve('srvonly.test')).map((t) => `${t.transport} ${t.address} ${t.port}`), ['udp 127.0.0.20 5999']);
    assert.deepEqual((await resolver.resolve('plain.test')).map((t) => `${t.transport} ${t.address} ${t.port}`), ['udp 127.0.0.30 5060']);
    assert.deepEqual((await resolver.resolve('plain.test', { transport: 'tls' })).map((t) => `${t.transport} ${t.port}`), ['tls 5061']);
  });

  it('skips an SRV "." target and falls back to A', async () => {
    assert.deepEqual((await resolver.resolve('none.test', { transport: 'udp' })).map((t) => `${t.address} ${t.port}`), ['127.0.0.40 5060']);
  });

  it('returns IP literals as they are and nothing for an unknown name', async () => {
    assert.deepEqual(await resolver.resolve('[::1]', { port: 5070 }), [{ address: '::1', port: 5070, transport: 'udp', name: '::1' }]);
    assert.deepEqual(await resolver.resolve('unknown.test'), []);
  });

  it('falls back to the hosts file for a name DNS does not know (getaddrinfo, as before RFC 3263)', async () => {
    // "localhost" is in every /etc/hosts and not in the loopback zone (NXDOMAIN there).
    const targets = await resolver.resolve('localhost', { port: 5070 });
    assert.ok(targets.some((t) => t.address === '127.0.0.1' && t.port === 5070 && t.transport === 'udp'), JSON.stringify(targets));
    assert.ok(dns.queries.some((q) => q.name === 'localhost' && q.type === 'A'), 'DNS was asked first');
  });

  it('orders SRV by priority, and by weight at random within a priority (RFC 2782)', () => {
    const records = [
      { name: 'low', port: 1, priority: 20, weight: 100 },
      { name: 'heavy', port: 1, priority: 10, weight: 90 },
      { name: 'light', port: 1, priority: 10, weight: 10 },
      { name: 'zero', port: 1, priority: 10, weight: 0 },
    ];
    // random 0 picks the first running sum >= 0: the zero-weight record (sorted first).
    assert.deepEqual(orderSrv(records, () => 0).map((r) => r.name), ['zero', 'light', 'heavy', 'low']);
    // random near 1 picks the last running sum: the heaviest.
    assert.deepEqual(orderSrv(records, () => 0.999).map((r) => r.name), ['heavy', 'light', 'zero', 'low']);
    // Over many draws the 90-weight record comes first about 90% of the time.
    let heavyFirst = 0;
    for (let i = 0; i < 2000; i++) if (orderSrv(records.slice(0, 3))[0]?.name === 'heavy') heavyFirst++;
    assert.ok(heavyFirst > 1650 && heavyFirst < 1950, `heavy first ${heavyFirst}/2000`);
  });
});

/** The answer cache (dns-cache.ts) on a FakeClock, against the same kind of loopback DNS server. */
describe('SipResolver answer cache (TTLs, RFC 2308 negative caching)', function () {
  this.timeout(20_000);
  let dns: LoopbackDns;
  let clock: FakeClock;
  let resolver: SipResolver;
  const asked = (from: number): string[] => dns.queries.slice(from).map((q) => `${q.type} ${q.name}`);

  beforeEach(async () => {
    dns = await LoopbackDns.start({
      // NAPTR for 120 s, SRV for 45 s: their own TTLs, not the 60 s stand-in.
      'ttl.test': { NAPTR: [naptr('ttl.test', 10, 10, 'SIP+D2U', '_sip._udp.ttl.test', 120)] },
      '_sip._udp.ttl.test': { SRV: [srv('_sip._udp.ttl.test', 'host.ttl.test', 5070, 10, 10, 45)] },
      // A for 10 s, AAAA for 30 s: the address set is kept per record type.
      'host.ttl.test': { A: [a('host.ttl.test', '127.0.0.11', 10)], AAAA: [aaaa('host.ttl.test', '::1', 30)] },
    });
    clock = new FakeClock(1_000_000);
    resolver = new SipResolver({ servers: [dns.server], timeoutMs: 300, tries: 1, clock, serviceTtlSeconds: 60 });
  });
  afterEach(async () => {
    await dns.close();
  });

  it('answers repeat calls from the cache until each record TTL runs out', async () => {
    const first = await resolver.resolve('ttl.test');
    assert.deepEqual(first.map((t) => `${t.address} ${t.port}`), ['127.0.0.11 5070', '::1 5070']);
    assert.deepEqual(asked(0).sort(), ['A host.ttl.test', 'AAAA host.ttl.test', 'NAPTR ttl.test', 'SRV _sip._udp.ttl.test']);
    const mark = dns.queries.length;
    clock.advance(9_000);
    assert.deepEqual(await resolver.resolve('ttl.test'), first);
    assert.deepEqual(asked(mark), [], 'no query inside every TTL');
    clock.advance(2_000); // 11 s: only the A record (TTL 10) has expired
    assert.deepEqual(await resolver.resolve('ttl.test'), first);
    assert.deepEqual(asked(mark), ['A host.ttl.test']);
    clock.advance(35_000); // 46 s: SRV (45 s), AAAA (30 s) and A (renewed at 11 s) again, not NAPTR (120 s)
    await resolver.resolve('ttl.test');
    assert.deepEqual(asked(mark + 1).sort(), ['A host.ttl.test', 'AAAA host.ttl.test', 'SRV _sip._udp.ttl.test']);
    const later = dns.queries.length;
    clock.advance(75_000); // 121 s: NAPTR too
    await resolver.resolve('ttl.test');
    assert.ok(asked(later).includes('NAPTR ttl.test'));
  });

  it('asks again over TCP when the UDP answer is truncated, and keeps that answer for serviceTtlSeconds', async () => {
    dns.truncate.add('_sip._udp.ttl.test');
    const targets = await resolver.resolve('ttl.test');
    assert.deepEqual(targets.map((t) => `${t.address} ${t.port}`), ['127.0.0.11 5070', '::1 5070']);
    const srvQueries = dns.queries.filter((q) => q.type === 'SRV').map((q) => q.transport);
    assert.equal(srvQueries[0], 'udp');
    assert.ok(srvQueries.includes('tcp'), `SRV over TCP after the TC bit: ${srvQueries.join(', ')}`);
    const mark = dns.queries.length;
    clock.advance(59_000);
    await resolver.resolve('ttl.test');
    assert.ok(!asked(mark).includes('SRV _sip._udp.ttl.test'), 'cached for serviceTtlSeconds (60 s)');
    clock.advance(2_000);
    await resolver.resolve('ttl.test');
    assert.ok(asked(mark).includes('SRV _sip._udp.ttl.test'));
  });

  it('keeps "no such name" only a few seconds (RFC 2308 sec. 5), so a new record is seen soon', async () => {
    assert.deepEqual(await resolver.resolve('late.test', { port: 5080 }), []);
    const mark = dns.queries.length;
    dns.zone['late.test'] = { A: [a('late.test', '127.0.0.50')] };
    clock.advance(4_000);
    assert.deepEqual(await resolver.resolve('late.test', { port: 5080 }), []);
    assert.deepEqual(asked(mark), [], 'the negative answer is still cached');
    clock.advance(1_500);
    assert.deepEqual((await resolver.resolve('late.test', { port: 5080 })).map((t) => t.address), ['127.0.0.50']);
  });

  it('pays for a dead DNS server once per failure window, not on every call, and shares one lookup between concurrent calls', async () => {
    dns.silent = true;
    const started = Date.now();
    // Two calls at once: one set of queries (NAPTR, 3 SRV, A, AAAA), not two.
    const both = await Promise.all([resolver.resolve('ttl.test'), resolver.resolve('ttl.test')]);
    assert.ok(Date.now() - started >= 300, 'the first call waited for the timeouts');
    assert.deepEqual(both, [[], []]);
    const timedOut = asked(0);
    assert.deepEqual(timedOut.filter((q) => q === 'NAPTR ttl.test'), ['NAPTR ttl.test']);
    const mark = dns.queries.length;
    const again = Date.now();
    await resolver.resolve('ttl.test');
    assert.ok(Date.now() - again < 250, 'the next call did not wait');
    assert.deepEqual(asked(mark), []);
    clock.advance(31_000); // the failure window (30 s) is over: DNS is asked again
    dns.silent = false;
    assert.deepEqual((await resolver.resolve('ttl.test')).map((t) => t.address), ['127.0.0.11', '::1']);
  });

  it('holds at most maxEntries answers, dropping the least recently used', async () => {
    const small = new SipResolver({ servers: [dns.server], timeoutMs: 300, tries: 1, clock, cache: { maxEntries: 2 } });
    dns.zone['one.test'] = { A: [a('one.test', '127.0.0.61')] };
    dns.zone['two.test'] = { A: [a('two.test', '127.0.0.62')] };
    await small.resolve('one.test', { port: 5060 }); // A, AAAA one.test (AAAA: cached miss)
    await small.resolve('two.test', { port: 5060 }); // evicts both one.test entries
    const mark = dns.queries.length;
    await small.resolve('two.test', { port: 5060 });
    assert.deepEqual(asked(mark), [], 'two.test still cached');
    await small.resolve('one.test', { port: 5060 });
    assert.deepEqual(asked(mark).sort(), ['A one.test', 'AAAA one.test']);
  });
});
