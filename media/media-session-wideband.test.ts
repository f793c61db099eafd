import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AudioFrame } from '../core/ports/media.js';
import { tone, toneShare } from '../test/helpers/tones.js';
import { G722Decoder, G722Encoder } from './codecs/g722.js';
import { MediaService } from './media-service.js';
import type { MediaSession } from './media-session.js';
import { parseRtpPacket, serializeRtpPacket, type RtpPacket } from './rtp/rtp-packet.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const g722Offer = (port: number): string =>
  `v=0\r\no=- 5 5 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${port} RTP/AVP 9 0 101\r\n` +
  'a=rtpmap:9 G722/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\n';

const join = (parts: readonly Int16Array[]): Int16Array => {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/** Wideband calls (docs/media.md, G.722): 16 kHz on the wire, to readers beside 8 kHz, and in the recording. */
describe('MediaSession with G.722 (real UDP)', () => {
  let service: MediaService;
  let peer: Socket;
  const received: RtpPacket[] = [];
  let dir: string;

  beforeEach(async () => {
    service = new MediaService({ bindAddress: '127.0.0.1', portMin: 47400, portMax: 47499 });
    peer = createSocket('udp4');
    received.length = 0;
    peer.on('message', (m) => {
      const p = parseRtpPacket(m);
      if (p) received.push(p);
    });
    peer.bind(0, '127.0.0.1');
    await once(peer, 'listening');
    dir = mkdtempSync(path.join(tmpdir(), 'wideband-'));
  });
  afterEach(async () => {
    await service.close();
    peer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers G.722 first in the offer with payload type 9 at an 8000 clock (RFC 3551 sec. 4.5.2)', async () => {
    const answer = await service.answer(g722Offer(peer.address().port));
    assert.ok(answer.ok);
    assert.match(answer.sdp, /^m=audio \d+ RTP\/AVP 9 101\r$/m);
    assert.match(answer.sdp, /^a=rtpmap:9 G722\/8000\r$/m);
    assert.equal(answer.session.codec, 'G722');
  });

  it('hands readers 16 kHz beside 8 kHz, records at 16 kHz, and sends G.722 at 160 per 20 ms', async () => {
    const answer = await service.answer(g722Offer(peer.address().port));
    assert.ok(answer.ok);
    const session = answer.session as MediaSession;
    const recording = path.join(dir, 'call.wav');
    await session.startRecording(recording);
    const frames: AudioFrame[] = [];
    const reading = (async () => {
      for await (const f of session.input) if (!f.concealed) frames.push(f);
    })();
    // The caller: 1 s of 300 Hz + 6 kHz at 16 kHz in 20 ms G.722 packets, paced in real time.
    const caller = tone(300, 1, 16_000, 6000).map((v, i) => v + Math.round(6000 * Math.sin((2 * Math.PI * 6000 * i) / 16_000)));
    const encoder = new G722Encoder();
    const port = session.port;
    session.output.write(tone(1000, 1, 8000));
    for (let k = 0; k < 50; k++) {
      const payload = new Uint8Array(160);
      encoder.encode(caller.subarray(k * 320, k * 320 + 320), payload);
      peer.send(serializeRtpPacket({ payloadType: 9, sequenceNumber: 100 + k, timestamp: 8000 + k * 160, ssrc: 77, payload, marker: k === 0 }), port, '127.0.0.1');
      await sleep(20);
    }
    const deadline = Date.now() + 5000;
    while (frames.length < 45 && Date.now() < deadline) await sleep(20);
    await session.stopRecording();
    await session.close();
    await reading;

    assert.ok(frames.length >= 45, `${frames.length} frames`);
    assert.ok(frames.every((f) => f.samples.length === 160 && f.wideband?.length === 320));
    const wide = join(frames.map((f) => f.wideband as Int16Array)).subarray(640);
    const narrow = join(frames.map((f) => f.samples)).subarray(320);
    assert.ok(toneShare(wide, 6000, 16_000) > 0.3, `6 kHz in the wideband frames: ${toneShare(wide, 6000, 16_000)}`);
    assert.ok(toneShare(wide, 300, 16_000) > 0.3);
    // The 8 kHz view keeps the 300 Hz and has nothing of 6 kHz (it would alias to 2 kHz).
    assert.ok(toneShare(narrow, 300, 8000) > 0.9, `300 Hz in the 8 kHz frames: ${toneShare(narrow, 300, 8000)}`);
    assert.ok(toneShare(narrow, 2000, 8000) < 0.01);

    // What we sent: G.722 (PT 9), timestamps 160 apart, our 1 kHz decoded at 16 kHz.
    const ours = received.filter((p) => p.payloadType === 9);
    assert.ok(ours.length > 30);
    // A tick skipped under load leaves a gap of whole packets, never a step other than 160 per 20 ms.
    const steps = ours.slice(1).map((p, i) => (p.timestamp - (ours[i] as RtpPacket).timestamp) >>> 0);
    assert.ok(steps.every((d) => d > 0 && d % 160 === 0) && ours.every((p) => p.payload.length === 160), steps.join(' '));
    const decoder = new G722Decoder();
    const sent = join(ours.map((p) => decoder.decode(p.payload)));
    assert.ok(toneShare(sent.subarray(0, 16_000), 1000, 16_000) > 0.5);

    // The recording: stereo 16 kHz, the caller's 6 kHz on the left.
    const file = readFileSync(recording);
    assert.equal(file.readUInt32LE(24), 16_000);
    assert.equal(file.readUInt16LE(22), 2);
    const pcm = new Int16Array(file.buffer.slice(file.byteOffset + 44, file.byteOffset + file.length));
    const left = pcm.filter((_, i) => i % 2 === 0);
    const span = left.subarray(3200, 3200 + 12_800);
    assert.ok(toneShare(span, 6000, 16_000) > 0.2, `6 kHz in the recording: ${toneShare(span, 6000, 16_000)}`);
  });
});
