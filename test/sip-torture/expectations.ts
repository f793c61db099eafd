import assert from 'node:assert/strict';
import { KNOWN_METHODS, isAcceptable, isRequest, isSipUri, type SipMessage, type SipRequest, type SipResponse, type SipUri, type Uri } from '../../gateway/sip/message/index.js';

/**
 * What RFC 4475 sec. 3 says an element does with each of its messages, as data. `accept`
 * messages come with the values the RFC draws attention to; `reject` ones with the status the
 * RFC names (or none, where the element just drops a bad response). `ua` records what the UA
 * layer above the parser answers, where the RFC names it, and `uaCheck` proves the parsed
 * message carries what that layer needs to decide so.
 */
export interface TortureCase {
  readonly name: string;
  readonly section: string;
  readonly title: string;
  readonly outcome: 'accept' | 'reject';
  /** For rejects: the status to answer, or undefined when nothing may be sent back. */
  readonly status?: number;
  /** For answered rejects: the reason phrase, naming the header at fault (RFC 3261 sec. 21.4.1). */
  readonly reason?: string;
  readonly check?: (m: SipMessage) => void;
  readonly ua?: string;
  /** How a stream transport treats the same octets, where it differs from a datagram. */
  readonly stream?: 'waits-for-more' | 'closes-connection' | 'datagram-only';
}

const req = (m: SipMessage): SipRequest => {
  assert.ok(isRequest(m), 'expected a request');
  return m;
};
const res = (m: SipMessage): SipResponse => {
  assert.ok(!isRequest(m), 'expected a response');
  return m as SipResponse;
};
const sip = (u: Uri): SipUri => {
  assert.ok(isSipUri(u), `expected a SIP URI, got ${u.raw}`);
  return u;
};
const unknownMethod = (m: SipMessage): void => assert.equal(KNOWN_METHODS.has(req(m).method), false);
const r = (n: number, s: string): string => s.repeat(n);

export const tortureCases: readonly TortureCase[] = [
  {
    name: 'wsinv', section: '3.1.1.1', title: 'A Short Tortuous INVITE', outcome: 'accept',
    check(m) {
      const q = req(m);
      assert.equal(q.method, 'INVITE');
      assert.equal(sip(q.requestUri).params.get('unknownparam'), null);
      assert.equal(q.to.tag, '1918181833n');
      assert.equal(q.from.displayName, 'J Rosenberg \\"');
      assert.equal(q.from.tag, '98asjd8');
      assert.equal(q.maxForwards, 68);
      assert.deepEqual(q.cseq, { seq: 9, method: 'INVITE' });
      assert.deepEqual(q.via.map((v) => [v.transport, v.host, v.branch]), [
        ['UDP', '192.0.2.2', '390skdjuw'],
        ['TCP', 'spindle.example.com', 'z9hG4bK9ikj8'],
        ['UDP', '192.168.255.111', 'z9hG4bK30239'],
      ]);
      assert.equal(q.headers.get('subject'), '');
      assert.equal(q.headers.get('newfangledheader'), 'newfangled value continued newfangled value');
      assert.equal(q.headers.get('UnknownHeaderWithUnusualValue'), ';;,,;;,;');
      const [contact] = q.contacts;
      assert.equal(contact?.displayName, 'Quoted string ""');
      assert.deepEqual(contact?.params.entries(), [['newparam', 'newvalue'], ['secondparam', null], ['q', '0.33']]);
      assert.deepEqual([...sip(q.routes[0]!.uri).params], [['lr', null], ['unknownwith', 'value'], ['unknown-no-value', null]]);
      assert.equal(q.body.length, 150);
    },
  },
  {
    name: 'intmeth', section: '3.1.1.2', title: 'Wide Range of Valid Characters', outcome: 'accept',
    ua: '501 (unknown method) with Allow', check(m) {
      const q = req(m);
      assert.equal(q.method, "!interesting-Method0123456789_*+`.%indeed'~");
      const u = sip(q.requestUri);
      assert.equal(u.user, "1_unusual.URI~(to-be!sure)&isn't+it$/crazy?,/;;*");
      assert.equal(u.password, "&it+has=1,weird!*pas$wo~d_too.(doesn't-it)");
      assert.equal(u.host, 'example.com');
      assert.equal(q.topVia.branch, "z9hG4bK-.!%66*_+`'~");
      assert.equal(q.to.displayName, 'BEL:\x07 NUL:\x00 DEL:\x7F');
      assert.equal(q.from.displayName, "token1~` token2'+_ token3*%!.-");
      assert.equal(q.from.params.get("fromParam''~+*_!.-%"), 'работающий');
      assert.equal(q.from.tag, "_token~1'+`*%!-.");
      assert.equal(q.callId, "intmeth.word%ZK-!.*_+'@word`~)(><:\\/\"][?}{");
      assert.equal(q.headers.get("extensionHeader-!.%*+_`'~"), '\uFEFF大停電');
      unknownMethod(m);
    },
  },
  {
    name: 'esc01', section: '3.1.1.3', title: 'Valid Use of the % Escaping Mechanism', outcome: 'accept',
    check(m) {
      const q = req(m);
      assert.equal(sip(q.requestUri).user, 'sips:user@example.com');
      assert.equal(sip(q.requestUri).host, 'example.net');
      assert.equal(sip(q.to.uri).user, 'user');
      assert.equal(sip(q.from.uri).user, 'I have spaces');
      const c = sip(q.contacts[0]!.uri);
      assert.equal(c.user, 'caller');
      assert.equal(c.params.get('lr'), null);
      // Never unescaped twice: value%41 is not valueA (RFC 3986).
      assert.equal(c.params.get('name'), 'value%41');
    },
  },
  {
    name: 'escnull', section: '3.1.1.4', title: 'Escaped Nulls in URIs', outcome: 'accept',
    check(m) {
      const q = req(m);
      assert.equal(sip(q.to.uri).user, 'null-\0-null');
      assert.deepEqual(q.contacts.map((c) => sip(c.uri).user), ['\0', '\0\0']);
    },
  },
  {
    name: 'esc02', section: '3.1.1.5', title: 'Use of % When It Is Not an Escape', outcome: 'accept',
    ua: '501 (RE%47IST%45R is not REGISTER)', check(m) {
      const q = req(m);
      assert.equal(q.method, 'RE%47IST%45R');
      unknownMethod(m);
      assert.equal(q.to.displayName, '%Z%45');
      assert.equal(q.topVia.branch, 'z9hG4bK209%fzsnel234');
      assert.deepEqual(q.contacts.map((c) => sip(c.uri).user), ['alias1', 'alias3']);
      assert.equal(q.headers.get('C%6Fntact'), '<sip:alias2@host2.example.com>');
    },
  },
  {
    name: 'lwsdisp', section: '3.1.1.6', title: 'Message with No LWS between Display Name and <', outcome: 'accept',
    check(m) {
      assert.equal(m.from.displayName, 'caller');
      assert.equal(m.from.tag, '323');
    },
  },
  {
    name: 'longreq', section: '3.1.1.7', title: 'Long Values in Header Fields', outcome: 'accept',
    check(m) {
      const q = req(m);
      assert.equal(q.to.displayName, `I have a user name of ${r(10, 'extreme')} proportion`);
      const to = sip(q.to.uri);
      assert.equal(to.port, 6000);
      assert.equal(to.params.get('unknownparam1'), `very${r(20, 'long')}value`);
      assert.equal(to.params.get(`longparam${r(25, 'name')}`), 'shortvalue');
      assert.equal(q.from.tag, `12${r(50, '982')}424`);
      assert.equal(q.callId, `longreq.one${r(20, 'really')}longcallid`);
      assert.equal(q.via.length, 34);
      assert.equal(q.via[0]?.host, 'sip33.example.com');
      assert.equal(q.via[33]?.received, '192.0.2.5');
      assert.equal(q.via[33]?.branch, `very${r(50, 'long')}branchvalue`);
      assert.equal(sip(q.contacts[0]!.uri).user, r(5, 'amazinglylongcallername'));
    },
  },
  {
    name: 'dblreq', section: '3.1.1.8', title: 'Extra Trailing Octets in a UDP Datagram', outcome: 'accept',
    stream: 'datagram-only', check(m) {
      assert.equal(req(m).method, 'REGISTER');
      assert.equal(m.body.length, 0);
      assert.equal(m.callId, 'dblreq.0ha0isndaksdj99sdfafnl3lk233412');
    },
  },
  {
    name: 'semiuri', section: '3.1.1.9', title: 'Semicolon-Separated Parameters in URI User Part', outcome: 'accept',
    check(m) {
      const u = sip(req(m).requestUri);
      assert.equal(u.user, 'user;par=u@example.net');
      assert.equal(u.host, 'example.com');
      assert.equal(u.params.size, 0);
      assert.equal(m.headers.values('accept').length, 6);
    },
  },
  {
    name: 'transports', section: '3.1.1.10', title: 'Varied and Unknown Transport Types', outcome: 'accept',
    check(m) {
      assert.deepEqual(m.via.map((v) => v.transport), ['UDP', 'SCTP', 'TLS', 'UNKNOWN', 'TCP']);
      assert.equal(m.callId, 'transports.kijh4akdnaqjkwendsasfdj');
    },
  },
  {
    name: 'mpart01', section: '3.1.1.11', title: 'Multipart MIME Message', outcome: 'accept',
    check(m) {
      assert.equal(m.body.length, 553);
      assert.ok(m.body.includes(0), 'binary part with NUL octets kept');
      assert.ok(m.body.toString('latin1').endsWith('--7a9cbec02ceef655--\r\n'));
      assert.equal(m.contentType, 'multipart/mixed;boundary=7a9cbec02ceef655');
      assert.equal(m.topVia.rport, true);
      assert.equal(m.topVia.port, 5070);
    },
  },
  {
    name: 'unreason', section: '3.1.1.12', title: 'Unusual Reason Phrase', outcome: 'accept',
    check(m) {
      assert.equal(res(m).status, 200);
      assert.equal(res(m).reason, '= 2**3 * 5**2 но сто девяносто девять - простое');
    },
  },
  {
    name: 'noreason', section: '3.1.1.13', title: 'Empty Reason Phrase', outcome: 'accept',
    check(m) {
      assert.equal(res(m).status, 100);
      assert.equal(res(m).reason, '');
    },
  },
  { name: 'badinv01', section: '3.1.2.1', title: 'Extraneous Header Field Separators', outcome: 'reject', status: 400, reason: 'Bad Via Header' },
  {
    name: 'clerr', section: '3.1.2.2', title: 'Content Length Larger Than Message', outcome: 'reject', status: 400, reason: 'Bad Content-Length Header',
    stream: 'waits-for-more',
  },
  {
    name: 'ncl', section: '3.1.2.3', title: 'Negative Content-Length', outcome: 'reject', status: 400, reason: 'Bad Content-Length Header',
    stream: 'closes-connection',
  },
  { name: 'scalar02', section: '3.1.2.4', title: 'Request Scalar Fields with Overlarge Values', outcome: 'reject', status: 400, reason: 'Bad CSeq Header' },
  { name: 'scalarlg', section: '3.1.2.5', title: 'Response Scalar Fields with Overlarge Values', outcome: 'reject' },
  { name: 'quotbal', section: '3.1.2.6', title: 'Unterminated Quoted String in Display Name', outcome: 'reject', status: 400, reason: 'Bad To Header' },
  { name: 'ltgtruri', section: '3.1.2.7', title: '<> Enclosing Request-URI', outcome: 'reject', status: 400, reason: 'Bad Request-URI' },
  { name: 'lwsruri', section: '3.1.2.8', title: 'Malformed SIP Request-URI (embedded LWS)', outcome: 'reject', status: 400, reason: 'Bad Request-URI' },
  {
    name: 'lwsstart', section: '3.1.2.9', title: 'Multiple SP Separating Request-Line Elements', outcome: 'accept',
    // The RFC lets a liberal element accept it, provided the extra SP is never forwarded.
    check(m) {
      assert.equal(req(m).uri, 'sip:user@example.com');
    },
  },
  {
    name: 'trws', section: '3.1.2.10', title: 'SP Characters at End of Request-Line', outcome: 'accept',
    check(m) {
      assert.equal(req(m).uri, 'sip:remote-target@example.com');
    },
  },
  { name: 'escruri', section: '3.1.2.11', title: 'Escaped Headers in SIP Request-URI', outcome: 'reject', status: 400, reason: 'Bad Request-URI' },
  {
    name: 'baddate', section: '3.1.2.12', title: 'Invalid Time Zone in Date Header Field', outcome: 'accept',
    // Allowed when the Date is not used; nothing here interprets it.
    check(m) {
      assert.equal(m.headers.get('date'), 'Fri, 01 Jan 2010 16:00:00 EST');
    },
  },
  {
    name: 'regbadct', section: '3.1.2.13', title: 'Failure to Enclose name-addr URI in <>', outcome: 'accept',
    ua: '400 from the registrar when it reads Contact', check(m) {
      assert.throws(() => m.contacts, /must be enclosed in <>/);
    },
  },
  { name: 'badaspec', section: '3.1.2.14', title: 'Spaces within addr-spec', outcome: 'reject', status: 400, reason: 'Bad To Header' },
  { name: 'baddn', section: '3.1.2.15', title: 'Non-token Characters in Display Name', outcome: 'reject', status: 400, reason: 'Bad From Header' },
  { name: 'badvers', section: '3.1.2.16', title: 'Unknown Protocol Version', outcome: 'reject', status: 505, reason: 'Version Not Supported' },
  { name: 'mismatch01', section: '3.1.2.17', title: 'Start Line and CSeq Method Mismatch', outcome: 'reject', status: 400, reason: 'Bad CSeq Header' },
  { name: 'mismatch02', section: '3.1.2.18', title: 'Unknown Method with CSeq Method Mismatch', outcome: 'reject', status: 501, reason: 'Not Implemented' },
  { name: 'bigcode', section: '3.1.2.19', title: 'Overlarge Response Code', outcome: 'reject', stream: 'closes-connection' },
  {
    name: 'badbranch', section: '3.2.1', title: 'Missing Transaction Identifier', outcome: 'accept',
    check(m) {
      assert.equal(m.topVia.branch, 'z9hG4bK');
    },
  },
  { name: 'insuf', section: '3.3.1', title: 'Missing Required Header Fields', outcome: 'reject', status: 400, reason: 'Missing From Header' },
  {
    name: 'unkscm', section: '3.3.2', title: 'Request-URI with Unknown Scheme', outcome: 'accept', ua: '416',
    check(m) {
      assert.equal(req(m).requestUri.scheme, 'nobodyknowsthisscheme');
    },
  },
  {
    name: 'novelsc', section: '3.3.3', title: 'Request-URI with Known but Atypical Scheme', outcome: 'accept', ua: '416',
    check(m) {
      assert.equal(req(m).requestUri.scheme, 'soap.beep');
    },
  },
  {
    name: 'unksm2', section: '3.3.4', title: 'Unknown URI Schemes in Header Fields', outcome: 'accept',
    check(m) {
      assert.equal(m.to.uri.scheme, 'isbn');
      assert.equal(m.from.uri.scheme, 'http');
      assert.equal(m.contacts[0]?.uri.scheme, 'name');
    },
  },
  {
    name: 'bext01', section: '3.3.5', title: 'Proxy-Require and Require', outcome: 'accept',
    ua: '420 Bad Extension listing both in Unsupported', check(m) {
      assert.deepEqual(m.list('require'), ['nothingSupportsThis', 'nothingSupportsThisEither']);
      assert.deepEqual(m.list('proxy-require'), ['noProxiesSupportThis', 'norDoAnyProxiesSupportThis']);
    },
  },
  {
    name: 'invut', section: '3.3.6', title: 'Unknown Content-Type', outcome: 'accept', ua: '415 with Accept',
    check(m) {
      assert.equal(m.contentType, 'application/unknownformat');
      assert.equal(m.body.length, 40);
    },
  },
  {
    name: 'regaut01', section: '3.3.7', title: 'Unknown Authorization Scheme', outcome: 'accept',
    ua: '401 with a Digest challenge', check(m) {
      assert.equal(m.headers.get('authorization'), 'NoOneKnowsThisScheme opaque-data=here');
    },
  },
  { name: 'multi01', section: '3.3.8', title: 'Multiple Values in Single Value Required Fields', outcome: 'reject', status: 400, reason: 'Bad From Header' },
  {
    name: 'mcl01', section: '3.3.9', title: 'Multiple Content-Length Values', outcome: 'reject', status: 400, reason: 'Bad Content-Length Header',
    stream: 'closes-connection',
  },
  {
    name: 'bcast', section: '3.3.10', title: '200 OK Response with Broadcast Via Header Field Value', outcome: 'accept',
    check(m) {
      assert.equal(m.via[1]?.host, '255.255.255.255');
    },
  },
  {
    name: 'zeromf', section: '3.3.11', title: 'Max-Forwards of Zero', outcome: 'accept', ua: 'a UAS answers normally',
    check(m) {
      assert.equal(m.maxForwards, 0);
    },
  },
  {
    name: 'cparam01', section: '3.3.12', title: 'REGISTER with a Contact Header Parameter', outcome: 'accept',
    check(m) {
      const [c] = m.contacts;
      assert.equal(c?.params.get('unknownparam'), null);
      assert.equal(sip(c!.uri).params.size, 0);
    },
  },
  {
    name: 'cparam02', section: '3.3.13', title: 'REGISTER with a url-parameter', outcome: 'accept',
    check(m) {
      const [c] = m.contacts;
      assert.equal(c?.params.size, 0);
      assert.equal(sip(c!.uri).params.get('unknownparam'), null);
    },
  },
  {
    name: 'regescrt', section: '3.3.14', title: 'REGISTER with a URL Escaped Header', outcome: 'accept',
    check(m) {
      assert.deepEqual(sip(m.contacts[0]!.uri).headers, [['Route', '<sip:sip.example.com>']]);
    },
  },
  {
    name: 'sdp01', section: '3.3.15', title: 'Unacceptable Accept Offering', outcome: 'accept',
    ua: '406 Not Acceptable with Accept: application/sdp', check(m) {
      assert.deepEqual(m.headers.values('accept'), ['text/nobodyKnowsThis']);
      // Our answer to an INVITE is SDP, which this Accept rules out (RFC 3261 sec. 21.4.7).
      assert.equal(isAcceptable(m.headers.getAll('accept'), 'application', 'sdp'), false);
    },
  },
  {
    name: 'inv2543', section: '3.4.1', title: 'INVITE with RFC 2543 Syntax', outcome: 'accept',
    ua: 'answered like any INVITE, not 400: the dialog reaches the caller at its From URI',
    stream: 'closes-connection', check(m) {
      assert.equal(m.topVia.branch, undefined);
      assert.equal(m.maxForwards, undefined);
      assert.equal(m.from.tag, undefined);
      assert.deepEqual(m.contacts, []);
      assert.ok(m.body.toString().startsWith('v=0\r\n'));
    },
  },
];
