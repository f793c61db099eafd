import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import type { ActiveCall, CallHandler } from '../../core/ports/call-handler.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import type { Call } from '../../gateway/call/call.js';
import { loadOrCreateTlsCredentials } from '../../gateway/sip/transport/certificate.js';
import { decodeWav, encodeWav } from '../../media/wav/wav.js';
import { RtpengineProcess } from '../../media/webrtc/rtpengine-process.js';
import { RtpengineSrtpRelay } from '../../media/webrtc/rtpengine-srtp.js';
import { runBaresip } from '../helpers/baresip.js';
import { numberDoc, testBox, trunkDoc } from '../helpers/resource-documents.js';
import { levelDb, tone, toneSeconds } from '../helpers/tones.js';
import { startGatewayFixture, type GatewayFixture } from './gateway-harness.js';
import { NodeUac } from './node-uac.js';
import { sipRequest, UdpPeer } from './udp-peer.js';

/** Numbers on trunks from 127.0.0.1 with each SRTP mode (the fixture's own trunk is `off`). */
const requiredDid = '+914440000031';
const optionalDid = '+914440000032';
const offDid = '+914440000001';

/** Plays a 1 kHz tone to the caller and keeps what the caller sent, for the whole call. */
class ToneCallHandler implements CallHandler {
  readonly calls: Array<{ call: ActiveCall; heard: Int16Array[] }> = [];

  async handle(call: ActiveCall): Promise<void> {
    const seen = { call, heard: [] as Int16Array[] };
    this.calls.push(seen);
    call.media.output.write(tone(1000, 3, 8000));
    for await (const frame of call.media.input) {
      if (call.signal.aborted) break;
      seen.heard.push(frame.samples);
    }
  }
}

const joined = (frames: readonly Int16Array[]): Int16Array => {
  const out = new Int16Array(frames.reduce((n, f) => n + f.length, 0));
  let at = 0;
  for (const f of frames) {
    out.set(f, at);
    at += f.length;
  }
  return out;
};

/**
 * Secure trunking (docs/media.md, SRTP): SDES-SRTP (RFC 4568) over SIP/TLS through the rtpengine
 * the gateway runs, with Debian's baresip as the carrier's user agent, and the refusals by mode
 * and transport.
 */
describe('SIP trunks with SDES-SRTP (baresip, rtpengine)', function () {
  this.timeout(120_000);
  let fx: GatewayFixture;
  let rtpengine: Awaited<ReturnType<typeof RtpengineProcess.start>>;
  let dir: string;
  let certFile: string;
  const handler = new ToneCallHandler();

  before(async function () {
    dir = mkdtempSync(path.join(tmpdir(), 'srtp-trunk-'));
    const creds = await loadOrCreateTlsCredentials({ dataDir: dir, commonName: '127.0.0.1' });
    certFile = path.join(dir, 'gateway.pem');
    writeFileSync(certFile, creds.cert);
    writeFileSync(path.join(dir, 'caller.wav'), encodeWav(tone(440, 6, 8000)));
    rtpengine = await RtpengineProcess.start({ binary: '/usr/bin/rtpengine', interface: '127.0.0.1', portMin: 35_000, portMax: 35_199, logger: pino({ level: 'silent' }) });
    fx = await startGatewayFixture({
      transports: { host: '127.0.0.1', port: 0, tcpPort: 0, tlsPort: 0, tls: { cert: creds.cert, key: creds.key } },
      callHandler: handler,
      ringMs: 0,
      srtp: new RtpengineSrtpRelay(rtpengine.bridge),
    });
    const defs = createResourceDefinitions({ secretBox: testBox() });
    const tenantId = fx.ids.tenantId;
    for (const [name, did, srtp] of [['secure', requiredDid, 'required'], ['maybe-secure', optionalDid, 'optional']] as const) {
      await defs.sipTrunk.repository.create(fx.store.db, tenantId, trunkDoc(name, {
        inbound: { terminationAddresses: ['127.0.0.1'], dids: [did] },
        outbound: { transport: 'tls' },
        srtp,
      }) as never);
      await defs.phoneNumber.repository.create(fx.store.db, tenantId, numberDoc(did, 'Flow', { provider: { type: 'customSipTrunk', trunk: name } }) as never);
    }
  });
  after(async () => {
    await fx?.close();
    rtpengine?.bridge.close();
    await rtpengine?.process.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function baresipCall(did: string, mediaenc: string, transport: 'tls' | 'udp') {
    const port = transport === 'tls' ? fx.gateway.ports.TLS : fx.gateway.ports.UDP;
    const before = handler.calls.length;
    const run = await runBaresip({
      account: `<sip:+919800000003@127.0.0.1;transport=${transport}>;regint=0;${mediaenc ? `mediaenc=${mediaenc};` : ''}audio_codecs=PCMU`,
      dial: `sip:${did}@127.0.0.1:${port};transport=${transport}`,
      sourceWav: path.join(dir, 'caller.wav'),
      seconds: 6,
      cafile: certFile,
    });
    return { run, seen: handler.calls[before] };
  }

  it('answers an RTP/SAVP offer over TLS with RTP/SAVP and a=crypto, and audio flows both ways', async () => {
    const { run, seen } = await baresipCall(requiredDid, 'srtp-mand', 'tls');
    try {
      assert.ok(seen, `no call reached the handler; baresip said:\n${run.output}`);
      const answer = (seen.call as Call).sdp.localSdp;
      assert.match(answer, /^m=audio \d+ RTP\/SAVP 0/m);
      assert.match(answer, /^a=crypto:\d+ AES_CM_128_HMAC_SHA1_80 inline:/m);
      // The platform heard baresip's 440 Hz (decrypted by rtpengine, decoded by media/).
      const heard = joined(seen.heard);
      assert.ok(toneSeconds(heard, 440, 8000) >= 2, `440 Hz for ${toneSeconds(heard, 440, 8000)} s, level ${levelDb(heard)} dBFS`);
      // baresip decrypted and decoded our 1 kHz.
      assert.ok(run.decoded, `no decoded dump; baresip said:\n${run.output}`);
      const got = decodeWav(readFileSync(run.decoded));
      assert.ok(toneSeconds(got, 1000, 8000) >= 1.5, `1 kHz for ${toneSeconds(got, 1000, 8000)} s, level ${levelDb(got)} dBFS`);
    } finally {
      run.cleanup();
    }
  });

  it('takes RFC 8643 opportunistic SRTP (RTP/AVP with a=crypto) on an optional trunk', async () => {
    const { run, seen } = await baresipCall(optionalDid, 'srtp', 'tls');
    try {
      assert.ok(seen, `no call reached the handler; baresip said:\n${run.output}`);
      const answer = (seen.call as Call).sdp.localSdp;
      assert.match(answer, /^m=audio \d+ RTP\/AVP 0/m);
      assert.match(answer, /^a=crypto:\d+ AES_CM_128_HMAC_SHA1_80 inline:/m);
      const heard = joined(seen.heard);
      assert.ok(toneSeconds(heard, 440, 8000) >= 2, `440 Hz for ${toneSeconds(heard, 440, 8000)} s`);
    } finally {
      run.cleanup();
    }
  });

  describe('later offers and answers go through the relay (SdpPath)', () => {
    const savp = (port: number, direction: string): string =>
      `v=0\no=- 7 ${direction === 'sendrecv' ? 1 : 2} IN IP4 127.0.0.1\ns=-\nc=IN IP4 127.0.0.1\nt=0 0\nm=audio ${port} RTP/SAVP 0\n` +
      `a=rtpmap:0 PCMU/8000\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz\na=${direction}\n`;
    const crlf = (text: string): string => text.replace(/\n/g, '\r\n');

    it('answers a re-INVITE (hold) with RTP/SAVP and a=crypto, and the media session follows', async () => {
      const uac = await NodeUac.tls(fx.gateway.ports.TLS as number, readFileSync(certFile));
      try {
        const uri = `sip:${requiredDid}@127.0.0.1`;
        const before = handler.calls.length;
        uac.request('INVITE', uri, 1, { body: crlf(savp(40_200, 'sendrecv')) });
        const ok = await uac.response('INVITE', 200);
        assert.match(ok.body.toString(), /^m=audio \d+ RTP\/SAVP 0/m);
        const to = ok.headers.get('to') ?? '';
        uac.request('ACK', uri, 1, { to });
        uac.request('INVITE', uri, 2, { to, body: crlf(savp(40_200, 'sendonly')) });
        const reok = await uac.response('INVITE', 200);
        const answer = reok.body.toString();
        assert.match(answer, /^m=audio \d+ RTP\/SAVP 0/m);
        assert.match(answer, /^a=crypto:\d+ AES_CM_128_HMAC_SHA1_80 inline:/m);
        assert.match(answer, /^a=recvonly\r$/m);
        uac.request('ACK', uri, 2, { to });
        // The platform's own session saw the plain re-offer: it now only receives.
        const seen = handler.calls[before];
        assert.ok(seen);
        const deadline = Date.now() + 3000;
        while (!/a=recvonly/.test(seen.call.media.localSdp) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        assert.match(seen.call.media.localSdp, /^m=audio \d+ RTP\/AVP 0/m);
        assert.match(seen.call.media.localSdp, /^a=recvonly\r$/m);
        uac.request('BYE', uri, 3, { to });
        await uac.response('BYE', 200);
      } finally {
        uac.close();
      }
    });

    it('offers RTP/SAVP in the 200 to an offerless INVITE on a required trunk and takes the answer from the ACK', async () => {
      const uac = await NodeUac.tls(fx.gateway.ports.TLS as number, readFileSync(certFile));
      try {
        const uri = `sip:${requiredDid}@127.0.0.1`;
        const before = handler.calls.length;
        uac.request('INVITE', uri, 1);
        const ok = await uac.response('INVITE', 200);
        const offer = ok.body.toString();
        assert.match(offer, /^m=audio \d+ RTP\/SAVP /m);
        assert.match(offer, /^a=crypto:\d+ AES_CM_128_HMAC_SHA1_80 inline:/m);
        const to = ok.headers.get('to') ?? '';
        uac.request('ACK', uri, 1, { to, body: crlf(savp(40_202, 'sendrecv')) });
        const seen = await (async () => {
          const deadline = Date.now() + 3000;
          while (!handler.calls[before] && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
          return handler.calls[before];
        })();
        assert.ok(seen);
        // The answer reached the media session in plain form: it sends to rtpengine's port, and the call stays up.
        const deadline = Date.now() + 3000;
        while (seen.call.media.codec === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        assert.equal(seen.call.media.codec, 'PCMU');
        await new Promise((r) => setTimeout(r, 300));
        assert.equal((seen.call as Call).state, 'active');
        uac.request('BYE', uri, 2, { to });
        await uac.response('BYE', 200);
      } finally {
        uac.close();
      }
    });
  });

  describe('refusals (488 with a Warning naming why)', () => {
    let peer: UdpPeer;
    beforeEach(async () => (peer = await UdpPeer.open()));
    afterEach(() => peer.close());

    const sdp = (proto: string, crypto: boolean): string =>
      `v=0\no=- 1 1 IN IP4 127.0.0.1\ns=-\nc=IN IP4 127.0.0.1\nt=0 0\nm=audio 40100 ${proto} 0\na=rtpmap:0 PCMU/8000\n` +
      (crypto ? 'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz\n' : '');

    async function invite(did: string, body: string): Promise<{ status: number; warning: string }> {
      const callId = `srtp-${Math.random().toString(36).slice(2)}`;
      peer.send(fx.gateway.ports.UDP as number, sipRequest(peer, 'INVITE', { uri: `sip:${did}@127.0.0.1`, callId, body: body.replace(/\n/g, '\r\n') }));
      const final = await peer.wait((e) => /^SIP\/2\.0 [2-6]\d\d /.test(e.text) && e.text.includes(callId), 5000);
      const status = Number(final.text.slice(8, 11));
      return { status, warning: /\r\nWarning: ([^\r]*)/.exec(final.text)?.[1] ?? '' };
    }

    it('refuses SDES keys over UDP on a required trunk', async () => {
      const r = await invite(requiredDid, sdp('RTP/SAVP', true));
      assert.equal(r.status, 488);
      assert.match(r.warning, /^399 127\.0\.0\.1:\d+ "this trunk requires SRTP, whose SDES keys need SIP over TLS \(RFC 4568 sec\. 8\.3\)"$/);
    });

    it('refuses an RTP/SAVP offer over UDP on an optional trunk (the keys crossed in the clear)', async () => {
      const r = await invite(optionalDid, sdp('RTP/SAVP', true));
      assert.equal(r.status, 488);
      assert.match(r.warning, /^399 .* "SDES keys \(a=crypto\) are refused over unencrypted SIP: use TLS \(RFC 4568 sec\. 8\.3\)"$/);
    });

    it('refuses RTP/SAVP on a trunk with SRTP off', async () => {
      const r = await invite(offDid, sdp('RTP/SAVP', true));
      assert.equal(r.status, 488);
      assert.match(r.warning, /^303 .* "SRTP is off on this trunk: offer RTP\/AVP"$/);
    });
  });

  /** Runs a scenario file in a child process that trusts baresip's certificate; its one result line, parsed. */
  async function childScenario<T>(file: string, folder: string, tag: string, prepare: (dir: string) => void): Promise<T> {
    // Node trusts extra CAs only from NODE_EXTRA_CA_CERTS at start: the call runs in a child process.
    const out = path.join(dir, folder);
    const creds = await loadOrCreateTlsCredentials({ dataDir: out, commonName: '127.0.0.1' });
    writeFileSync(path.join(out, 'baresip.pem'), Buffer.concat([creds.cert, creds.key]));
    prepare(out);
    const child = spawn(process.execPath, ['--import', 'tsx', `test/gateway/${file}`, out], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { ...process.env, NODE_EXTRA_CA_CERTS: creds.certFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const line = stdout.split('\n').find((l) => l.startsWith(`${tag} `));
    assert.ok(line, `the scenario failed (exit ${code}):\n${stdout.slice(-3000)}\n${stderr.slice(-3000)}`);
    return JSON.parse(line.slice(tag.length + 1)) as T;
  }

  it('offers RTP/SAVP with a=crypto on outbound calls over a required trunk (baresip answering with srtp-mand)', async () => {
    const r = await childScenario<{ outcome: string; reason?: string; offer: string; heard440: number; heardSeconds: number; decoded1000: number; output: string[] }>(
      'srtp-outbound-scenario.ts',
      'outbound',
      'SRTP-OUTBOUND-RESULT',
      (out) => writeFileSync(path.join(out, 'callee.wav'), encodeWav(tone(440, 12, 8000))),
    );
    assert.equal(r.outcome, 'answered', `${r.reason ?? ''}\n${r.output.join('\n')}`);
    assert.match(r.offer, /^m=audio \d+ RTP\/SAVP /m);
    assert.match(r.offer, /^a=crypto:\d+ AES_CM_128_HMAC_SHA1_80 inline:/m);
    assert.doesNotMatch(r.offer, /NULL_HMAC|F8_128|a=fingerprint/);
    // baresip plays its 440 Hz file for the ~8 s the call lasts before its -t ends it.
    assert.ok(r.heard440 >= 5, `440 Hz heard for ${r.heard440} s of ${r.heardSeconds} s`);
    // Our 3 s of 1 kHz, decrypted by baresip.
    assert.ok(r.decoded1000 >= 2, `1 kHz heard by baresip for ${r.decoded1000} s`);
  });

  it('bridges a transfer to a number on a required trunk with RTP/SAVP on the second leg too (the desk is baresip with srtp-mand)', async () => {
    const r = await childScenario<{ trunkId: string | null; outcome?: { ok: boolean; reason?: string; sipStatus?: number; cause?: string }; deskOffer: string; callerAnswer: string; deskHeard440: number; callerHeard1000: number; output: string[] }>(
      'srtp-transfer-scenario.ts',
      'transfer',
      'SRTP-TRANSFER-RESULT',
      (out) => {
        writeFileSync(path.join(out, 'desk.wav'), encodeWav(tone(1000, 16, 8000)));
      },
    );
    assert.ok(r.trunkId, 'the call came in on the secure trunk');
    assert.deepEqual(r.outcome, { ok: true, method: 'bridge' }, r.output.join('\n'));
    assert.match(r.callerAnswer, /^m=audio \d+ RTP\/SAVP /m);
    // The second leg's INVITE: an SDES offer with the suites we allow, never plain RTP.
    assert.match(r.deskOffer, /^m=audio \d+ RTP\/SAVP /m);
    assert.match(r.deskOffer, /^a=crypto:\d+ AES_CM_128_HMAC_SHA1_80 inline:/m);
    assert.doesNotMatch(r.deskOffer, /NULL_HMAC|F8_128|a=fingerprint/);
    // Audio crossed the bridge both ways, decrypted at each end: the caller's 440 Hz at the desk, the desk's 1 kHz at the caller.
    assert.ok(r.deskHeard440 >= 4, `440 Hz heard at the desk for ${r.deskHeard440} s\n${r.output.join('\n')}`);
    assert.ok(r.callerHeard1000 >= 4, `1 kHz heard by the caller for ${r.callerHeard1000} s\n${r.output.join('\n')}`);
  });

  it('refuses plain RTP over TLS on a required trunk (baresip without SRTP)', async () => {
    const { run, seen } = await baresipCall(requiredDid, '', 'tls');
    try {
      assert.equal(seen, undefined);
      assert.match(run.output, /488 Not Acceptable Here \(this trunk requires SRTP: offer RTP\/SAVP with a=crypto \(RFC 4568\)\)/);
    } finally {
      run.cleanup();
    }
  });
});
