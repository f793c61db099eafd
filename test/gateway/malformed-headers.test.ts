import assert from 'node:assert/strict';
import type { CallDirectory, DirectoryNumber, DirectoryTrunk } from '../../core/ports/call-directory.js';
import { StoreCallDirectory } from '../../control-api/features/gateway-adapters/store-call-directory.js';
import { captureLogs } from '../helpers/log-capture.js';
import { numbers, startGatewayFixture, type GatewayFixture } from './gateway-harness.js';
import { UdpPeer } from './udp-peer.js';

/** The store's directory, counting every lookup: a malformed request must cause none. */
class CountingDirectory implements CallDirectory {
  lookups = 0;
  constructor(private readonly inner: CallDirectory) {}
  trunksForSource(address: string): Promise<readonly DirectoryTrunk[]> {
    this.lookups++;
    return this.inner.trunksForSource(address);
  }
  numberByE164(number: string): Promise<DirectoryNumber | undefined> {
    this.lookups++;
    return this.inner.numberByE164(number);
  }
  trunkByExtension(extension: string): Promise<DirectoryTrunk | undefined> {
    this.lookups++;
    return this.inner.trunkByExtension(extension);
  }
  numberForTrunk(trunk: DirectoryTrunk): Promise<DirectoryNumber | undefined> {
    this.lookups++;
    return this.inner.numberForTrunk(trunk);
  }
}

const SDP = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n';

/**
 * An INVITE from the trunk's address to its DID; `edit` replaces (string), removes (null) or
 * adds header lines by name, `ruri` the Request-URI.
 */
function invite(peer: UdpPeer, callId: string, edit: Record<string, string | null> = {}, ruri = `sip:${numbers.trunkDid}@127.0.0.1`): string {
  const lines: Array<[string, string]> = [
    ['Via', `SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bK${callId};rport`],
    ['Max-Forwards', '70'],
    ['From', '<sip:+919800000001@127.0.0.1>;tag=caller1'],
    ['To', `<${ruri}>`],
    ['Call-ID', callId],
    ['CSeq', '1 INVITE'],
    ['Contact', `<sip:caller@127.0.0.1:${peer.port}>`],
    ['Content-Type', 'application/sdp'],
  ];
  const out: Array<[string, string]> = [];
  for (const [name, value] of lines) {
    const v = name in edit ? edit[name] : value;
    if (v !== null && v !== undefined) out.push([name, v]);
  }
  for (const [name, v] of Object.entries(edit)) if (v !== null && !lines.some(([n]) => n === name)) out.push([name, v]);
  const body = 'Content-Length' in edit ? '' : `Content-Length: ${Buffer.byteLength(SDP)}\r\n`;
  return `INVITE ${ruri} SIP/2.0\r\n${out.map(([n, v]) => `${n}: ${v}\r\n`).join('')}${body}\r\n${SDP}`;
}

/**
 * RFC 3261 sec. 8.2 / 21.4.1: a request with a malformed header the gateway needs is answered
 * 400 with a reason phrase naming the header, before routing touches it (no directory lookup,
 * no handler), and nothing is logged at error level. Found by fuzzing: a bad To URI used to
 * surface as a 500 from deep inside the number lookup.
 */
describe('gateway: malformed headers are answered 400 before routing', function () {
  this.timeout(60_000);
  let fx: GatewayFixture;
  let directory: CountingDirectory;
  const log = captureLogs('debug');
  const errorLines = (): string[] => log.lines.filter((l) => l.level === 'error' || l.level === 'fatal').map((l) => l.msg);
  let peer: UdpPeer;

  before(async () => {
    fx = await startGatewayFixture({ logger: log.logger, ringMs: 0 }, (store) => {
      directory = new CountingDirectory(new StoreCallDirectory({ db: store.db }));
      return { directory };
    });
    peer = await UdpPeer.open();
  });
  after(async () => {
    peer?.close();
    await fx?.close();
  });

  /** The final answer to the request whose branch carries `callId` (it works without a Call-ID too), read from the raw text. */
  async function answer(text: string, callId: string): Promise<{ status: number; reason: string; warning?: string }> {
    peer.socket.send(Buffer.from(text), fx.gateway.ports.UDP as number, '127.0.0.1');
    const hit = await peer.wait((e) => /^SIP\/2\.0 [2-6]\d\d /.test(e.text) && e.text.includes(`branch=z9hG4bK${callId}`), 5000);
    const [, status, reason] = /^SIP\/2\.0 (\d{3}) ([^\r]*)/.exec(hit.text) ?? [];
    const warning = /\r\nWarning: ([^\r]*)/.exec(hit.text)?.[1];
    return { status: Number(status), reason: reason ?? '', ...(warning ? { warning } : {}) };
  }

  const cases: Array<[string, Record<string, string | null>, string, string?]> = [
    // The fuzz case: R-URI not a number, so routing falls back to the To user and parsed its URI.
    ['a To URI with a stray quote', { To: '<sip:+914440009999@127.0.0.">' }, 'Bad To Header', 'sip:svc@127.0.0.1'],
    ['a From URI with a bad port', { From: '<sip:+919800000001@127.0.0.1:99999>;tag=c' }, 'Bad From Header'],
    ['a Contact URI with an empty parameter', { Contact: '<sip:caller@127.0.0.1;;lr>' }, 'Bad Contact Header'],
    ['a Record-Route that is no address', { 'Record-Route': '<sip:proxy@127.0.0.1;lr' }, 'Bad Record-Route Header'],
    ['a CSeq without a number', { CSeq: 'one INVITE' }, 'Bad CSeq Header'],
    ['a Max-Forwards out of range', { 'Max-Forwards': '256' }, 'Bad Max-Forwards Header'],
    ['a Content-Length that is no number', { 'Content-Length': 'ten' }, 'Bad Content-Length Header'],
    ['a Content-Type without a subtype', { 'Content-Type': 'application' }, 'Bad Content-Type Header'],
    ['an Accept with a bad qvalue', { Accept: 'application/sdp;q=2' }, 'Bad Accept Header'],
    ['a Session-Expires that is no number', { 'Session-Expires': 'soon' }, 'Bad Session-Expires Header'],
    ['a Require with a non-token tag', { Require: 'time"r' }, 'Bad Require Header'],
    ['two From headers', { From: '<sip:a@127.0.0.1>;tag=1\r\nFrom: <sip:b@127.0.0.1>;tag=2' }, 'Bad From Header'],
    ['a second Via that is malformed', { Via: 'SIP/2.0/UDP 127.0.0.1:1;branch=z9hG4bKx;rport\r\nVia: SIP/2.0 nonsense' }, 'Bad Via Header'],
    ['no Call-ID', { 'Call-ID': null }, 'Missing Call-ID Header'],
    ['no Contact from an RFC 3261 UAC (sec. 8.1.1.8)', { Contact: null }, 'Missing Contact Header'],
    ['a Request-URI with a bad port', {}, 'Bad Request-URI', 'sip:+914440000001@127.0.0.1:70000'],
  ];

  for (const [what, edit, reason, ruri] of cases) {
    it(`${what}: 400 ${reason}, no lookup, no error log`, async () => {
      const callId = `bad-${reason.replace(/\W/g, '')}-${Math.random().toString(36).slice(2, 8)}`;
      const lookups = directory.lookups;
      const errors = errorLines().length;
      const handled = fx.handler.calls.length;
      let text = invite(peer, callId, edit, ruri);
      if (edit.Via) text = text.replace(/^Via: .*\r\n/m, `Via: ${edit.Via.replace('z9hG4bKx', `z9hG4bK${callId}`).replace('127.0.0.1:1;', `127.0.0.1:${peer.port};`)}\r\n`);
      const res = await answer(text, callId);
      assert.equal(res.status, 400);
      assert.equal(res.reason, reason);
      // The detail goes in a Warning (RFC 3261 sec. 20.43), so the reason phrase stays exact.
      assert.match(res.warning ?? '', /^399 voice-agent-platform "/);
      assert.equal(directory.lookups, lookups, 'no directory lookup for a malformed request');
      assert.equal(fx.handler.calls.length, handled);
      assert.equal(errorLines().length, errors, errorLines().join('; '));
    });
  }

  it('answers a re-INVITE with a malformed Contact inside a call 400, and the call goes on (it was an unhandled rejection)', async () => {
    // The Contact of a target refresh was parsed inside Dialog.refresh, run without a catch: the
    // SipParseError became an unhandled rejection, which ends a Node process (found by the fuzz bench).
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const callId = `reinvite-${Math.random().toString(36).slice(2, 8)}`;
      const before = fx.handler.calls.length;
      peer.socket.send(Buffer.from(invite(peer, callId)), fx.gateway.ports.UDP as number, '127.0.0.1');
      const ok = await peer.wait((e) => /^SIP\/2\.0 200 /.test(e.text) && e.text.includes(`branch=z9hG4bK${callId}`), 5000);
      const toTag = /\r\nTo: [^\r]*;tag=([^;\r]+)/.exec(ok.text)?.[1] as string;
      const inDialog = (method: string, cseq: number, branch: string, edit: Record<string, string | null> = {}): string =>
        invite(peer, branch, { To: `<sip:${numbers.trunkDid}@127.0.0.1>;tag=${toTag}`, 'Call-ID': callId, CSeq: `${cseq} ${method}`, ...edit })
          .replace(/^INVITE /, `${method} `);
      peer.socket.send(Buffer.from(inDialog('ACK', 1, `${callId}a`)), fx.gateway.ports.UDP as number, '127.0.0.1');
      const res = await answer(inDialog('INVITE', 2, `${callId}r`, { Contact: '<sip:caller@127.0.0.1;;>' }), `${callId}r`);
      assert.deepEqual([res.status, res.reason], [400, 'Bad Contact Header']);
      const bye = await answer(inDialog('BYE', 3, `${callId}b`), `${callId}b`);
      assert.equal(bye.status, 200, 'the call was still up');
      const seen = fx.handler.calls[before];
      const end = Date.now() + 3000;
      while (seen?.endReason === undefined && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      assert.equal(seen?.endReason, 'remote-bye');
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('routes the same INVITE when it is well formed (the lookups above would have been counted)', async () => {
    const callId = `good-${Math.random().toString(36).slice(2, 8)}`;
    const lookups = directory.lookups;
    const res = await answer(invite(peer, callId, {}, 'sip:svc@127.0.0.1'), callId);
    assert.equal(res.status, 404);
    assert.ok(directory.lookups > lookups);
  });
});
