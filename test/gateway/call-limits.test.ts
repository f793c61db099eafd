import assert from 'node:assert/strict';
import { FakeClock } from '../../core/clock.js';
import type { Call } from '../../gateway/call/call.js';
import type { SipResponse } from '../../gateway/sip/message/message.js';
import { numbers, startGatewayFixture, type GatewayFixture, type SeenCall } from './gateway-harness.js';
import { UdpPeer, sipRequest, statusLine } from './udp-peer.js';

const offer = (port: number): string =>
  `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n`;

/**
 * Per-number call limits (spec: Max call duration with AI 5-30 min, default 15; End Call on
 * Silence 1-5 min, default 2) on an injected clock: the gateway ends the call with BYE.
 */
describe('gateway: max call duration and end-call-on-silence', function () {
  this.timeout(30_000);
  const clock = new FakeClock(Date.now());
  let fx: GatewayFixture;
  const did = `sip:${numbers.trunkDid}@127.0.0.1`;

  before(async () => {
    fx = await startGatewayFixture({ clock, ringMs: 0 });
  });
  after(async () => {
    await fx?.close();
  });

  async function answered(peer: UdpPeer, callId: string): Promise<{ seen: SeenCall; tag: string }> {
    const before = fx.handler.calls.length;
    peer.send(fx.gateway.ports.UDP as number, sipRequest(peer, 'INVITE', { uri: did, callId, body: offer(41_000) }));
    const ok = (await peer.wait((e) => statusLine(200)(e) && e.msg?.callId === callId)).msg as SipResponse;
    const tag = ok.to.tag as string;
    peer.send(fx.gateway.ports.UDP as number, sipRequest(peer, 'ACK', { uri: did, callId, toTag: tag, cseq: '1 ACK' }));
    const end = Date.now() + 2000;
    const confirmed = (): boolean => (fx.handler.calls[before]?.call as Call | undefined)?.leg.state === 'confirmed';
    // The ACK must have reached the dialog before the clock jumps, or 64*T1 would pass without it.
    while (!confirmed() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    assert.ok(confirmed());
    return { seen: fx.handler.calls[before] as SeenCall, tag };
  }

  const byeFor = (peer: UdpPeer, callId: string, ms = 1000) => peer.wait((e) => e.text.startsWith('BYE ') && e.msg?.callId === callId, ms);

  it('ends the call with BYE when the number maximum duration (15 min default) is reached', async () => {
    const peer = await UdpPeer.open();
    try {
      const { seen } = await answered(peer, 'long-call');
      // Keep the silence timer (2 min) from firing first: the caller keeps talking.
      for (let minute = 0; minute < 14; minute++) {
        clock.advance(60_000);
        seen.call.noteCallerSpeech();
      }
      await assert.rejects(byeFor(peer, 'long-call', 200));
      clock.advance(60_000);
      await byeFor(peer, 'long-call');
      assert.equal(await seen.call.ended.then((e) => e.reason), 'max-duration');
    } finally {
      peer.close();
    }
  });

  it('ends the call when the caller has not spoken for the number silence limit (2 min default)', async () => {
    const peer = await UdpPeer.open();
    try {
      const { seen } = await answered(peer, 'quiet-call');
      clock.advance(90_000);
      seen.call.noteCallerSpeech();
      clock.advance(90_000);
      await assert.rejects(byeFor(peer, 'quiet-call', 200), 'speech restarted the silence timer');
      clock.advance(31_000);
      await byeFor(peer, 'quiet-call');
      const end = await seen.call.ended;
      assert.equal(end.reason, 'caller-silence');
      assert.equal(end.durationMs, 211_000);
    } finally {
      peer.close();
    }
  });

  it('ends a late-offer call whose ACK brings no SDP answer (RFC 3264 sec. 5)', async () => {
    const peer = await UdpPeer.open();
    try {
      const before = fx.handler.calls.length;
      peer.send(fx.gateway.ports.UDP as number, sipRequest(peer, 'INVITE', { uri: did, callId: 'no-answer-sdp' }));
      const ok = (await peer.wait((e) => statusLine(200)(e) && e.msg?.callId === 'no-answer-sdp')).msg as SipResponse;
      assert.match(ok.body.toString(), /m=audio \d+ RTP\/AVP/, 'the 200 carries our offer');
      peer.send(fx.gateway.ports.UDP as number, sipRequest(peer, 'ACK', { uri: did, callId: 'no-answer-sdp', toTag: ok.to.tag as string, cseq: '1 ACK' }));
      await byeFor(peer, 'no-answer-sdp');
      assert.equal((await fx.handler.calls[before]?.call.ended)?.reason, 'no-sdp-answer');
    } finally {
      peer.close();
    }
  });
});
