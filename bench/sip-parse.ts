/**
 * Micro benchmark of the SIP message layer: parse + serialize of a typical INVITE and 200 OK,
 * and the UAS step "parse INVITE, build and serialize the 200". For reference the same work is
 * done with the npm `sip` 0.0.6 parser, the bar the architecture guide sets for the stack.
 *
 *   node --import tsx bench/sip-parse.ts
 */
import { createRequire } from 'node:module';
import { createResponse, isRequest, parseDatagram, serialize, type SipMessage } from '../gateway/sip/message/index.js';

const sdp = [
  'v=0',
  'o=- 3812345678 3812345678 IN IP4 198.51.100.7',
  's=-',
  'c=IN IP4 198.51.100.7',
  't=0 0',
  'm=audio 40000 RTP/AVP 0 8 101',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-16',
  'a=ptime:20',
  'a=sendrecv',
  '',
].join('\r\n');

const invite = Buffer.from(
  [
    'INVITE sip:+15551230000@gw.example.com:5060 SIP/2.0',
    'Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bK-524287-1---7f3a9c1e;rport',
    'Max-Forwards: 70',
    'Contact: <sip:+15559870000@198.51.100.7:5060;transport=udp>',
    'To: <sip:+15551230000@gw.example.com>',
    'From: "Caller" <sip:+15559870000@carrier.example.net>;tag=8d1c2f3a',
    'Call-ID: 6a8f0b3c9d2e4f1a7b5c@198.51.100.7',
    'CSeq: 1 INVITE',
    'Allow: INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE, REFER, NOTIFY',
    'Supported: replaces, timer',
    'User-Agent: CarrierSBC 4.2',
    'Content-Type: application/sdp',
    `Content-Length: ${Buffer.byteLength(sdp)}`,
    '',
    sdp,
  ].join('\r\n'),
);

const ok = Buffer.from(
  [
    'SIP/2.0 200 OK',
    'Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bK-524287-1---7f3a9c1e;rport=5060;received=198.51.100.7',
    'Record-Route: <sip:203.0.113.5;lr>',
    'Contact: <sip:+15551230000@203.0.113.9:5060>',
    'To: <sip:+15551230000@gw.example.com>;tag=as5f1e2d3c',
    'From: "Caller" <sip:+15559870000@carrier.example.net>;tag=8d1c2f3a',
    'Call-ID: 6a8f0b3c9d2e4f1a7b5c@198.51.100.7',
    'CSeq: 1 INVITE',
    'Allow: INVITE, ACK, CANCEL, BYE, OPTIONS',
    'Supported: replaces, timer',
    'Content-Type: application/sdp',
    `Content-Length: ${Buffer.byteLength(sdp)}`,
    '',
    sdp,
  ].join('\r\n'),
);

/** What a transaction layer reads from every message. */
function touch(m: SipMessage): number {
  return m.callId.length + m.cseq.seq + (m.topVia.branch?.length ?? 0) + (m.from.tag?.length ?? 0) + (m.to.tag?.length ?? 0);
}

function run(name: string, work: () => number, unit = 'msg', ms = 1500): void {
  for (let i = 0; i < 20_000; i++) work(); // warm-up for the JIT
  let n = 0;
  let sink = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < 1000; i++) sink += work();
    n += 1000;
    elapsed = Number(process.hrtime.bigint() - t0) / 1e6;
  }
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const perSecond = n / (elapsed / 1000);
  const perCpuSecond = n / cpuSeconds;
  console.log(
    `${name.padEnd(52)} ${Math.round(perSecond).toLocaleString('en-US').padStart(9)} ${unit}/s ` +
      `${Math.round(perCpuSecond).toLocaleString('en-US').padStart(9)} ${unit}/CPU-s ${(1e6 / perCpuSecond).toFixed(2).padStart(6)} us/${unit}` +
      (sink === -1 ? '!' : ''),
  );
}

console.log(`node ${process.version}; INVITE ${invite.length} B, 200 OK ${ok.length} B`);
run('ours: parse INVITE', () => touch(parseDatagram(invite)));
run('ours: parse + serialize INVITE', () => serialize(parseDatagram(invite)).length);
run('ours: parse + serialize 200 OK', () => serialize(parseDatagram(ok)).length);
run('ours: UAS step (parse INVITE, build+serialize 200)', () => {
  const req = parseDatagram(invite);
  if (!isRequest(req)) return 0;
  touch(req);
  return serialize(createResponse(req, 200, undefined, { toTag: 'a1b2c3', body: Buffer.from(sdp) })).length;
});

// A whole UAS call as the message layer sees it: INVITE in, 100 and 200 out, ACK in, BYE in, 200 out.
const ack = Buffer.from(
  invite
    .toString()
    .split('\r\n\r\n')[0]!
    .replace('INVITE sip:', 'ACK sip:')
    .replace('CSeq: 1 INVITE', 'CSeq: 1 ACK')
    .replace('branch=z9hG4bK-524287-1---7f3a9c1e', 'branch=z9hG4bK-524287-2---8a1b')
    .replace(/Content-Type: application\/sdp\r\nContent-Length: \d+/, 'Content-Length: 0')
    .replace('To: <sip:+15551230000@gw.example.com>', 'To: <sip:+15551230000@gw.example.com>;tag=a1b2c3') + '\r\n\r\n',
);
const bye = Buffer.from(ack.toString().replace('ACK sip:', 'BYE sip:').replace('CSeq: 1 ACK', 'CSeq: 2 BYE').replace('8a1b', '9c2d'));
run('ours: one UAS call (INVITE/100/200/ACK/BYE/200)', () => {
  const inv = parseDatagram(invite);
  if (!isRequest(inv)) return 0;
  touch(inv);
  let n = serialize(createResponse(inv, 100)).length;
  n += serialize(createResponse(inv, 200, undefined, { toTag: 'a1b2c3', body: Buffer.from(sdp) })).length;
  n += touch(parseDatagram(ack));
  const b = parseDatagram(bye);
  if (!isRequest(b)) return 0;
  touch(b);
  return n + serialize(createResponse(b, 200)).length;
}, 'call');

interface KirmSip {
  parse(s: Buffer | string): Record<string, unknown> | undefined;
  stringify(m: unknown): string;
}
let kirm: KirmSip | undefined;
try {
  kirm = createRequire(import.meta.url)('sip') as KirmSip;
} catch {
  console.log('(npm "sip" not installed: reference rows skipped)');
}
if (kirm) {
  const k = kirm;
  run('npm sip 0.0.6: parse INVITE', () => (k.parse(invite) ? 1 : 0));
  run('npm sip 0.0.6: parse + stringify INVITE', () => k.stringify(k.parse(invite)).length);
  run('npm sip 0.0.6: parse + stringify 200 OK', () => k.stringify(k.parse(ok)).length);
}
