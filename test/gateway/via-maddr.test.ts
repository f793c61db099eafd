import assert from 'node:assert/strict';
import { pino } from 'pino';
import { systemClock } from '../../core/clock.js';
import { TransportSet } from '../../gateway/sip/transport/transport-set.js';
import { canonicalIp, isMulticast, maddrHonoured } from '../../gateway/sip/ua/maddr-policy.js';
import { SipStack } from '../../gateway/sip/ua/sip-stack.js';
import { UdpPeer, statusLine } from './udp-peer.js';

/** RFC 3261 sec. 18.2.2 maddr: a request must not aim our responses at a host it does not come from. */
describe('Via maddr hardening (responses over UDP)', function () {
  this.timeout(10_000);
  let stack: SipStack;
  let transports: TransportSet;
  let port: number;

  before(async () => {
    stack = new SipStack({ clock: systemClock, logger: pino({ level: 'silent' }), publicAddress: '127.0.0.1' });
    transports = await TransportSet.start({ host: '127.0.0.1', port: 0, tcpPort: 0 }, stack.receive);
    stack.attach(transports);
    port = transports.ports.UDP as number;
  });
  after(async () => {
    await transports.close();
  });

  const options = (sentBy: string, params: string): string =>
    `OPTIONS sip:svc@127.0.0.1 SIP/2.0\nVia: SIP/2.0/UDP ${sentBy};branch=z9hG4bK${Math.random().toString(36).slice(2)}${params}\n` +
    'Max-Forwards: 70\nFrom: <sip:peer@127.0.0.1>;tag=p1\nTo: <sip:svc@127.0.0.1>\nCall-ID: maddr-1\nCSeq: 1 OPTIONS\nContent-Length: 0\n\n';

  it('ignores a maddr that is not the source: the answer goes to received/rport, never to the named host', async () => {
    const peer = await UdpPeer.open('127.0.0.1');
    const victim = await UdpPeer.open('127.0.0.2');
    try {
      peer.send(port, options(`127.0.0.1:${victim.port}`, ';rport;maddr=127.0.0.2'));
      await peer.wait(statusLine(200));
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(victim.got.length, 0, 'nothing reached the host maddr named');
    } finally {
      peer.close();
      victim.close();
    }
  });

  it('honours a maddr equal to the packet source (sent-by port, sec. 18.2.2)', async () => {
    const peer = await UdpPeer.open('127.0.0.1');
    const other = await UdpPeer.open('127.0.0.1');
    try {
      peer.send(port, options(`127.0.0.1:${other.port}`, ';maddr=127.0.0.1'));
      await other.wait(statusLine(200));
      assert.equal(peer.got.length, 0);
    } finally {
      peer.close();
      other.close();
    }
  });

  it('allows only multicast groups the configuration lists', () => {
    assert.equal(isMulticast('239.1.2.3'), true);
    assert.equal(isMulticast('ff02::1'), true);
    assert.equal(isMulticast('127.0.0.1'), false);
    assert.equal(maddrHonoured('239.1.2.3', '127.0.0.1'), false);
    assert.equal(maddrHonoured('239.1.2.3', '127.0.0.1', ['239.1.2.3']), true);
    assert.equal(maddrHonoured('10.0.0.1', '127.0.0.1', ['10.0.0.1']), false, 'a unicast address is never allowed by the list');
    assert.equal(maddrHonoured('[::1]', '::1'), true);
  });

  it('compares addresses parsed, not as text (FF02::1 is ff02::1)', () => {
    assert.equal(maddrHonoured('FF02::1', '::1', ['ff02::1']), true);
    assert.equal(maddrHonoured('[ff02:0:0:0:0:0:0:1]', '::1', ['FF02::1']), true);
    assert.equal(maddrHonoured('ff02::1', '::1', ['[FF02:0000::0001]']), true);
    assert.equal(maddrHonoured('ff02::2', '::1', ['ff02::1']), false, 'another group stays refused');
    assert.equal(maddrHonoured('0:0:0:0:0:0:0:1', '::1'), true, 'the source in another spelling');
    assert.equal(maddrHonoured('127.0.0.1', '::ffff:127.0.0.1'), true, 'a dual-stack source is its IPv4 address');
    assert.equal(maddrHonoured('::FFFF:7F00:2', '127.0.0.2'), true);
    assert.equal(maddrHonoured('127.0.0.2', '::ffff:127.0.0.1'), false);
    assert.equal(canonicalIp('[2001:DB8:0:0:1:0:0:1]'), '2001:db8::1:0:0:1');
    assert.equal(canonicalIp('fe80::1%ETH0'), 'fe80::1%eth0');
    assert.equal(canonicalIp('host.example'), 'host.example');
  });
});
