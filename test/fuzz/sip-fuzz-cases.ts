import { isIP } from 'node:net';
import { tortureCases } from '../sip-torture/expectations.js';
import { loadTortureMessage } from '../sip-torture/load-fixture.js';
import { Random } from '../helpers/http-fuzz/random.js';

/**
 * Deterministic SIP fuzz cases: a seed message (normal requests of every method the gateway
 * meets, and the 49 RFC 4475 torture messages) and one to three mutations, all drawn from a PRNG
 * seeded per case, so case N of a seed is the same whatever ran before it (`--only N` replays it).
 */

/** The shared seeded PRNG (mulberry32), with `int(n)` in 0..n-1 as the cases pick. */
export class Prng {
  private readonly random: Random;
  constructor(seed: number) {
    this.random = new Random(seed);
  }
  next(): number {
    return this.random.next();
  }
  int(n: number): number {
    return this.random.int(0, n - 1);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  chance(p: number): boolean {
    return this.random.chance(p);
  }
}

/** The PRNG of case `index` for run `seed`. */
export const casePrng = (seed: number, index: number): Prng => new Prng(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35));

/** Where the case comes from: its answers must come back to this address and port. */
export interface CaseOrigin {
  readonly transport: 'UDP' | 'TCP';
  readonly host: string;
  readonly port: number;
  /** The gateway's port for that transport (Request-URI host:port). */
  readonly gatewayPort: number;
  /** A DID the directory knows, so some INVITEs go all the way to a call. */
  readonly did: string;
}

const SDP = (host: string): string =>
  `v=0\r\no=fuzz 1 1 IN IP4 ${host}\r\ns=-\r\nc=IN IP4 ${host}\r\nt=0 0\r\nm=audio 49170 RTP/AVP 0 8 101\r\n` +
  'a=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\na=rtpmap:101 telephone-event/8000\r\na=sendrecv\r\n';

function request(o: CaseOrigin, id: string, method: string, opts: { user?: string; toTag?: string; body?: string; extra?: string; cseq?: string } = {}): string {
  const ruri = `sip:${opts.user ?? o.did}@127.0.0.1:${o.gatewayPort}`;
  const body = opts.body ?? '';
  return `${method} ${ruri} SIP/2.0\r\nVia: SIP/2.0/${o.transport} ${o.host}:${o.port};branch=z9hG4bK${id};rport\r\n` +
    `Max-Forwards: 70\r\nFrom: "Fuzz" <sip:+919800000001@${o.host}>;tag=f${id}\r\nTo: <${ruri}>${opts.toTag ? `;tag=${opts.toTag}` : ''}\r\n` +
    `Call-ID: ${id}@fuzz\r\nCSeq: ${opts.cseq ?? `1 ${method}`}\r\nContact: <sip:fuzz@${o.host}:${o.port};transport=${o.transport.toLowerCase()}>\r\n` +
    `User-Agent: sip-fuzz\r\n${opts.extra ?? ''}${body ? 'Content-Type: application/sdp\r\n' : ''}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

const NORMAL_SEEDS: ReadonlyArray<readonly [string, (o: CaseOrigin, id: string) => string]> = [
  ['INVITE to the DID', (o, id) => request(o, id, 'INVITE', { body: SDP(o.host), extra: 'Supported: timer\r\nSession-Expires: 1800\r\nAllow: INVITE, ACK, BYE, CANCEL, OPTIONS\r\n' })],
  ['INVITE without SDP', (o, id) => request(o, id, 'INVITE')],
  ['INVITE to an unknown number', (o, id) => request(o, id, 'INVITE', { user: '+14155559999', body: SDP(o.host) })],
  ['OPTIONS', (o, id) => request(o, id, 'OPTIONS', { extra: 'Accept: application/sdp\r\n' })],
  ['REGISTER', (o, id) => request(o, id, 'REGISTER', { user: 'fuzz', extra: 'Expires: 3600\r\n' })],
  ['BYE in a dialog', (o, id) => request(o, id, 'BYE', { toTag: 'gw1', cseq: '2 BYE' })],
  ['CANCEL', (o, id) => request(o, id, 'CANCEL')],
  ['ACK', (o, id) => request(o, id, 'ACK', { toTag: 'gw1' })],
  ['re-INVITE', (o, id) => request(o, id, 'INVITE', { toTag: 'gw1', cseq: '2 INVITE', body: SDP(o.host) })],
  ['INFO', (o, id) => request(o, id, 'INFO', { toTag: 'gw1', cseq: '3 INFO', extra: 'Content-Type: application/dtmf-relay\r\n' })],
];

/** A call the gateway answered to an earlier case: in-dialog seeds use its identifiers. */
export interface LiveDialog {
  readonly callId: string;
  /** Our From tag and the gateway's To tag. */
  readonly fromTag: string;
  readonly toTag: string;
}

/**
 * Requests inside a dialog the gateway really has (RFC 3261 sec. 12.2): target refreshes, INFO,
 * REFER, NOTIFY, OPTIONS, BYE. The CSeq grows with the case index, so unmutated ones are in order.
 */
function inDialog(o: CaseOrigin, id: string, d: LiveDialog, index: number, method: string, extra = '', body = ''): string {
  const ruri = `sip:gateway@127.0.0.1:${o.gatewayPort}`;
  return `${method} ${ruri} SIP/2.0\r\nVia: SIP/2.0/${o.transport} ${o.host}:${o.port};branch=z9hG4bK${id};rport\r\n` +
    `Max-Forwards: 70\r\nFrom: "Fuzz" <sip:+919800000001@${o.host}>;tag=${d.fromTag}\r\nTo: <sip:${o.did}@127.0.0.1:${o.gatewayPort}>;tag=${d.toTag}\r\n` +
    `Call-ID: ${d.callId}\r\nCSeq: ${index + 2} ${method}\r\nContact: <sip:fuzz@${o.host}:${o.port};transport=${o.transport.toLowerCase()}>\r\n` +
    `${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

const IN_DIALOG_SEEDS: ReadonlyArray<readonly [string, (o: CaseOrigin, id: string, d: LiveDialog, index: number) => string]> = [
  ['re-INVITE in a live dialog', (o, id, d, i) => inDialog(o, id, d, i, 'INVITE', 'Content-Type: application/sdp\r\nSupported: timer\r\nSession-Expires: 1800;refresher=uac\r\n', SDP(o.host))],
  ['UPDATE in a live dialog', (o, id, d, i) => inDialog(o, id, d, i, 'UPDATE', 'Content-Type: application/sdp\r\n', SDP(o.host))],
  ['INFO DTMF in a live dialog', (o, id, d, i) => inDialog(o, id, d, i, 'INFO', 'Content-Type: application/dtmf-relay\r\n', 'Signal=5\r\nDuration=160\r\n')],
  ['REFER in a live dialog', (o, id, d, i) => inDialog(o, id, d, i, 'REFER', `Refer-To: <sip:+914440000002@${o.host}>\r\nReferred-By: <sip:fuzz@${o.host}>\r\n`)],
  ['NOTIFY in a live dialog', (o, id, d, i) => inDialog(o, id, d, i, 'NOTIFY', 'Event: refer\r\nSubscription-State: active;expires=60\r\nContent-Type: message/sipfrag\r\n', 'SIP/2.0 200 OK\r\n')],
  ['OPTIONS in a live dialog', (o, id, d, i) => inDialog(o, id, d, i, 'OPTIONS')],
  ['BYE in a live dialog', (o, id, d, i) => inDialog(o, id, d, i, 'BYE')],
];

const TORTURE = tortureCases.map((c) => [c.name, loadTortureMessage(c.name).toString('latin1')] as const);

/** A torture message with its top Via aimed at `o`, so its answer comes back. */
function tortureSeed(text: string, o: CaseOrigin): string {
  return text.replace(/^(Via|v)[ \t]*:[ \t]*SIP[ \t]*\/[ \t]*2\.0[ \t]*\/[ \t]*\w+[ \t]+[^;,\r\n]+/im, `$1: SIP/2.0/${o.transport} ${o.host}:${o.port}`);
}

const BAD_URIS = [
  'sip:+914440009999@127.0.0."', 'sip:@127.0.0.1', 'sip:a@[::1', 'sip:a@127.0.0.1:99999', 'sip:a@h;;x', 'tel:', 'sip:a b@c',
  '<sip:a@b', 'sip:', 'sips:%', 'sip:a@b?', 'sip:a@b;transport=', 'sip:a@-', 'sip:a@b:', 'sip:a@b:-1', 'sip:%00@\u0000',
  'sip:a@[zz::1]', 'http:', ':', 'sip:a@b;=x', 'sip:a@b?=&', 'sip:a@127.0.0.1;maddr=', '*',
];
const BAD_NUMBERS = ['-1', '2147483648', '99999999999999999999', 'abc', '', '1.5', '0x10', ' ', '+5', '1e3', '4294967296', '00000000000000000001', '٣'];

type Mutation = (text: string, r: Prng) => string;

const lines = (text: string): { head: string[]; body: string } => {
  const end = text.indexOf('\r\n\r\n');
  return end < 0 ? { head: text.split('\r\n'), body: '' } : { head: text.slice(0, end).split('\r\n'), body: text.slice(end + 4) };
};
const join = (head: string[], body: string): string => `${head.join('\r\n')}\r\n\r\n${body}`;
const headerIndexes = (head: string[], name?: RegExp): number[] => head.flatMap((l, i) => (i > 0 && (!name || name.test(l)) ? [i] : []));
const replaceHeader = (text: string, r: Prng, name: RegExp, value: (old: string) => string): string => {
  const { head, body } = lines(text);
  const at = headerIndexes(head, name);
  if (at.length === 0) return text;
  const i = r.pick(at);
  const line = head[i] ?? '';
  const colon = line.indexOf(':');
  head[i] = `${line.slice(0, colon + 1)} ${value(line.slice(colon + 1).trim())}`;
  return join(head, body);
};

/** The mutations the brief names; each works on latin1 text (one char = one octet). */
export const MUTATIONS: ReadonlyArray<readonly [string, Mutation]> = [
  ['byte flips', (t, r) => {
    const a = t.split('');
    for (let k = 0, n = 1 + r.int(8); k < n && a.length > 0; k++) a[r.int(a.length)] = String.fromCharCode(r.int(256));
    return a.join('');
  }],
  ['header deletion', (t, r) => {
    const { head, body } = lines(t);
    const at = headerIndexes(head);
    if (at.length > 0) head.splice(r.pick(at), 1);
    return join(head, body);
  }],
  ['header duplication', (t, r) => {
    const { head, body } = lines(t);
    const at = headerIndexes(head);
    if (at.length > 0) {
      const i = r.pick(at);
      head.splice(1 + r.int(head.length - 1), 0, head[i] ?? '');
    }
    return join(head, body);
  }],
  ['truncation', (t, r) => t.slice(0, r.int(t.length + 1))],
  ['bad URI', (t, r) => {
    const bad = r.pick(BAD_URIS);
    const where = r.int(4);
    if (where === 0) return t.replace(/^(\S+) \S+/, `$1 ${bad}`);
    const name = [/^(to|t)\s*:/i, /^(from|f)\s*:/i, /^(contact|m)\s*:/i][where - 1] as RegExp;
    return replaceHeader(t, r, name, (old) => (r.chance(0.5) ? `<${bad}>` : old.replace(/<[^>]*>/, `<${bad}>`)));
  }],
  ['bad number', (t, r) => {
    const bad = r.pick(BAD_NUMBERS);
    const which = r.int(3);
    if (which === 0) return replaceHeader(t, r, /^cseq\s*:/i, (old) => old.replace(/^\S*/, bad));
    if (which === 1) return replaceHeader(t, r, /^(content-length|l)\s*:/i, () => bad);
    return replaceHeader(t, r, /^max-forwards\s*:/i, () => bad);
  }],
  ['huge header', (t, r) => {
    const { head, body } = lines(t);
    const size = r.pick([1000, 8000, 30_000, 60_000]);
    const value = r.chance(0.5) ? 'x'.repeat(size) : Array.from({ length: size / 10 }, (_, k) => `<sip:h${k}@a>`).join(',');
    head.splice(1 + r.int(head.length - 1), 0, `${r.pick(['X-Huge', 'Via', 'Route', 'Contact', 'Subject', 'To'])}: ${value}`);
    return join(head, body);
  }],
  ['invalid UTF-8', (t, r) => {
    const at = r.int(t.length);
    return t.slice(0, at) + r.pick(['\xc3\x28', '\xff', '\xed\xa0\x80', '\xf8\x88\x80\x80\x80', '\xc0\xaf', '\xe2\x82']) + t.slice(at);
  }],
  ['NULs', (t, r) => {
    let out = t;
    for (let k = 0, n = 1 + r.int(3); k < n; k++) {
      const at = r.int(out.length + 1);
      out = `${out.slice(0, at)}\0${out.slice(at)}`;
    }
    return out;
  }],
  ['folded line', (t, r) => {
    const { head, body } = lines(t);
    const i = r.int(head.length);
    const line = head[i] ?? '';
    const at = r.int(line.length + 1);
    head[i] = `${line.slice(0, at)}\r\n${r.pick([' ', '\t', '   '])}${line.slice(at)}`;
    return join(head, body);
  }],
  ['unknown method', (t, r) => {
    const m = r.pick(['FOO', 'invite', 'INV ITE', 'I', 'NOTIFY', 'PRACK', 'SUBSCRIBE', 'REFER', 'UPDATE', 'MESSAGE', 'X'.repeat(300), '']);
    const keepCseq = r.chance(0.5);
    const out = t.replace(/^\S*/, m);
    return keepCseq ? out : out.replace(/^(CSeq\s*:\s*\d+\s+)\S+/im, `$1${m}`);
  }],
  ['line ends', (t, r) => (r.chance(0.5) ? t.replace(/\r\n/g, '\n') : t.replace(/\r\n/g, r.pick(['\r', '\n\r', '\r\r\n'])))],
  ['empty or odd value', (t, r) => replaceHeader(t, r, /./, () => r.pick(['', ';', ',', '<>', '"', '\\', ';tag=', '*', '<sip:a@b>;tag=1;tag=2']))],
];

/**
 * The seed made loopback-only before mutating, its Content-Length kept true when it was (the
 * rewritten addresses change the body length), so unmutated seeds stay what they were.
 */
function sanitizedSeed(text: string, ownHost: string, rtp: { host: string; port: number }): string {
  const clean = loopbackOnly(text, ownHost, rtp);
  const bodyOf = (t: string): string => (t.indexOf('\r\n\r\n') < 0 ? '' : t.slice(t.indexOf('\r\n\r\n') + 4));
  const declared = /^(?:Content-Length|l)[ \t]*:[ \t]*(\d+)/im.exec(text);
  if (!declared || Number(declared[1]) !== bodyOf(text).length) return clean;
  return clean.replace(/^((?:Content-Length|l)[ \t]*:[ \t]*)\d+/im, `$1${bodyOf(clean).length}`);
}

export interface FuzzCase {
  readonly index: number;
  readonly seed: string;
  readonly mutations: readonly string[];
  readonly octets: Buffer;
}

/**
 * Case `index` of run `seed`, from `origin`. A quarter of the cases are requests inside a dialog:
 * `dialog` (a call the gateway answered from this source), else made-up tags (then 481). Which
 * dialog depends on timing; the seed, the mutations and where they hit do not.
 */
export function makeCase(seed: number, index: number, origin: CaseOrigin, rtp: { host: string; port: number }, dialog?: LiveDialog): FuzzCase {
  const r = casePrng(seed, index);
  const id = `fz${seed}x${index}`;
  let name: string;
  let text: string;
  const pick = r.next();
  if (pick < 0.25) {
    const [n, build] = r.pick(IN_DIALOG_SEEDS);
    [name, text] = [n, build(origin, id, dialog ?? { callId: `${id}@fuzz`, fromTag: 'f1', toTag: 'gw1' }, index)];
  } else if (pick < 0.55) {
    // The INVITE that becomes a call is weighted up: the in-dialog cases need live calls.
    const [n, build] = r.chance(0.3) ? (NORMAL_SEEDS[0] as (typeof NORMAL_SEEDS)[number]) : r.pick(NORMAL_SEEDS);
    [name, text] = [n, build(origin, id)];
  } else {
    const [n, raw] = r.pick(TORTURE);
    [name, text] = [`rfc4475 ${n}`, tortureSeed(raw, origin)];
  }
  text = sanitizedSeed(text, origin.host, rtp);
  const applied: string[] = [];
  // One case in ten goes unmutated: the seeds themselves must be answered sensibly too.
  const count = r.chance(0.1) ? 0 : r.chance(0.6) ? 1 : 2 + r.int(2);
  for (let k = 0; k < count; k++) {
    const [m, mutate] = r.pick(MUTATIONS);
    applied.push(m);
    text = mutate(text, r);
  }
  return { index, seed: name, mutations: applied, octets: Buffer.from(loopbackOnly(text, origin.host, rtp), 'latin1') };
}

/**
 * Test rule: the gateway may only ever send to loopback, and this machine's loopback is shared
 * with other suites. So after mutation every IP literal outside the start line becomes the
 * case's own source address (127.0.3.x, used by nobody else), every SDP c= line the RTP sink's
 * address and every m= port its port (a host name in c= would make the media layer resolve it,
 * a stray port could land on another suite's RTP socket). No mutation can then aim the
 * gateway's answers, BYEs or RTP anywhere but at the fuzzer.
 */
export function loopbackOnly(text: string, ownHost: string, rtp: { host: string; port: number }): string {
  const nl = text.search(/[\r\n]/);
  const start = nl < 0 ? text : text.slice(0, nl);
  const rest = nl < 0 ? '' : text.slice(nl);
  return start + rest
    .replace(/[0-9]{1,3}(?:\.[0-9]{1,3}){3}/g, (ip) => (isIP(ip) === 4 ? ownHost : ip))
    .replace(/[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*/g, (ip) => (isIP(ip) === 6 ? ownHost : ip))
    .replace(/(^|[\r\n])c=[^\r\n]*/g, (_line, lead: string) => `${lead}c=IN IP4 ${rtp.host}`)
    .replace(/(^|[\r\n])m=(\S*) [^ \r\n]*/g, (_line, lead: string, media: string) => `${lead}m=${media} ${rtp.port}`);
}
