import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../core/errors.js';
import type { AudioFrame, MediaDtmfEvent } from '../core/ports/media.js';
import { FRAME_SAMPLES, pcmu } from './codecs/g711.js';
import { writeTelephoneEvent } from './dtmf/rfc4733.js';
import { MediaService } from './media-service.js';
import type { MediaSession } from './media-session.js';
import { parseRtpPacket, serializeRtpPacket } from './rtp/rtp-packet.js';
import { writeWav } from './wav/wav.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function tone(samples: number, freq = 440, amplitude = 10000): Int16Array {
  return Int16Array.from({ length: samples }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * freq * i) / 8000)));
}

function snrDb(reference: Int16Array, actual: Int16Array): number {
  let signal = 0;
  let noise = 0;
  for (let i = 0; i < reference.length; i++) {
    const r = reference[i] ?? 0;
    signal += r * r;
    noise += (r - (actual[i] ?? 0)) ** 2;
  }
  return 10 * Math.log10(signal / Math.max(noise, 1e-9));
}

/** Collects `input` frames in the background. */
function collect(session: MediaSession): { frames: AudioFrame[]; stop: () => void } {
  const frames: AudioFrame[] = [];
  let stopped = false;
  void (async () => {
    for await (const f of session.input) {
      if (stopped) break;
      frames.push(f);
    }
  })();
  return { frames, stop: () => (stopped = true) };
}

function concat(frames: AudioFrame[]): Int16Array {
  const out = new Int16Array(frames.length * FRAME_SAMPLES);
  frames.forEach((f, i) => out.set(f.samples, i * FRAME_SAMPLES));
  return out;
}

function throughG711(pcm: Int16Array): Int16Array {
  const wire = new Uint8Array(pcm.length);
  pcmu.encode(pcm, wire);
  return pcmu.decode(wire);
}

function firstNonSilent(samples: Int16Array, from = 0): number {
  for (let i = from; i < samples.length; i++) if (Math.abs(samples[i] ?? 0) > 50) return i;
  return -1;
}

async function waitFor(predicate: () => boolean, timeoutMs = 3000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('timed out waiting for condition');
    await sleep(10);
  }
}

async function udp(): Promise<Socket> {
  const s = createSocket('udp4');
  s.bind(0, '127.0.0.1');
  await once(s, 'listening');
  return s;
}

const offerFrom = (port: number, extra = ''): string =>
  `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0 101\r\n` +
  `a=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\n${extra}`;

describe('MediaSession over real UDP on 127.0.0.1', () => {
  let service: MediaService;
  let dir: string;

  beforeEach(async () => {
    service = new MediaService({ bindAddress: '127.0.0.1', portMin: 47000, portMax: 47199, jitterDepth: 3 });
    dir = await mkdtemp(join(tmpdir(), 'vap-media-'));
  });
  afterEach(async () => {
    await service.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function pair(): Promise<{ caller: MediaSession; agent: MediaSession }> {
    const caller = await service.offer();
    const answer = await service.answer(caller.localSdp);
    assert.ok(answer.ok);
    assert.ok(caller.applyAnswer(answer.sdp).ok);
    return { caller, agent: answer.session as MediaSession };
  }

  describe('offer/answer and audio', () => {
    it('negotiates PCMU with telephone-event on even ports', async () => {
      const { caller, agent } = await pair();
      assert.equal(caller.codec, 'PCMU');
      assert.equal(agent.codec, 'PCMU');
      assert.equal(caller.port % 2, 0);
      assert.equal(agent.negotiated?.telephoneEventPayloadType, 101);
      assert.equal(service.openSessions, 2);
    });

    it('carries a tone from one session to the other at G.711 quality', async () => {
      const { caller, agent } = await pair();
      const heard = collect(agent);
      const sent = tone(8000);
      const outcome = await caller.output.play([sent]);
      assert.equal(outcome, 'completed');
      await sleep(150);
      heard.stop();
      const received = concat(heard.frames);
      const start = firstNonSilent(received) - firstNonSilent(sent);
      assert.ok(start >= 0, 'tone not received');
      // Loopback loses nothing, so the tone arrives whole, frame-aligned.
      assert.equal(start % FRAME_SAMPLES, 0);
      const snr = snrDb(sent.subarray(1, 7999), received.subarray(start, start + 8000).subarray(1, 7999));
      assert.ok(snr > 30, `SNR ${snr.toFixed(1)} dB`);
      assert.equal(agent.jitterStats.late + agent.jitterStats.duplicates, 0);
    });

    it('answers no_common_codec (488) without taking a port', async () => {
      const result = await service.answer(offerFrom(4000).replace('RTP/AVP 0 101', 'RTP/AVP 18').replace('a=rtpmap:0 PCMU/8000', 'a=rtpmap:18 G729/8000'));
      assert.deepEqual(result.ok ? null : [result.reason, result.sipStatus], ['no_common_codec', 488]);
      assert.equal(service.pool.leased, 0);
    });
  });

  describe('DTMF (RFC 4733)', () => {
    it('sends and receives digits in both directions', async () => {
      const { caller, agent } = await pair();
      const atAgent: MediaDtmfEvent[] = [];
      const atCaller: MediaDtmfEvent[] = [];
      agent.on('dtmf', (e) => atAgent.push(e));
      caller.on('dtmf', (e) => atCaller.push(e));
      await Promise.all([caller.sendDtmf('12#', { durationMs: 80 }), agent.sendDtmf('9')]);
      await waitFor(() => atAgent.length === 3 && atCaller.length === 1);
      assert.deepEqual(atAgent.map((e) => [e.digit, e.durationMs, e.endSeen]), [['1', 80, true], ['2', 80, true], ['#', 80, true]]);
      assert.deepEqual(atCaller.map((e) => [e.digit, e.durationMs]), [['9', 100]]);
    });

    it('detects events from a sender that never sets the marker bit', async () => {
      const peer = await udp();
      const answer = await service.answer(offerFrom(peer.address().port));
      assert.ok(answer.ok);
      const session = answer.session as MediaSession;
      const digits: string[] = [];
      session.on('dtmf', (e) => digits.push(e.digit));
      let seq = 100;
      // Two presses of "5" (same digit: only the timestamp tells them apart), then "0".
      for (const [ts, event] of [[8000, 5], [16000, 5], [24000, 0]] as const) {
        for (const [duration, end] of [[160, false], [320, false], [480, true], [480, true], [480, true]] as const) {
          const payload = Buffer.alloc(4);
          writeTelephoneEvent(payload, 0, { event, end, volume: 10, duration });
          peer.send(serializeRtpPacket({ payloadType: 101, sequenceNumber: seq++, timestamp: ts, ssrc: 7, payload }), session.port, '127.0.0.1');
          await sleep(5);
        }
      }
      await waitFor(() => digits.length === 3);
      assert.deepEqual(digits, ['5', '5', '0']);
      peer.close();
    });

    it('refuses digits when telephone-event was not negotiated', async () => {
      const answer = await service.answer(offerFrom(4000).replace(' 101', '').replace(/a=rtpmap:101.*\r\na=fmtp.*\r\n/, ''));
      assert.ok(answer.ok);
      await assert.rejects(answer.session.sendDtmf('1'), /telephone-event/);
    });
  });

  describe('symmetric RTP', () => {
    it('latches to the source port of the peer\'s packets and then ignores other sources', async () => {
      const advertised = await udp();
      const actual = await udp();
      const intruder = await udp();
      const answer = await service.answer(offerFrom(advertised.address().port));
      assert.ok(answer.ok);
      const session = answer.session as MediaSession;
      let toAdvertised = 0;
      let toActual = 0;
      advertised.on('message', () => toAdvertised++);
      actual.on('message', (m) => (parseRtpPacket(m)?.payloadType === 0 ? toActual++ : undefined));
      await waitFor(() => toAdvertised > 0);
      for (let seq = 1; seq <= 3; seq++) {
        actual.send(serializeRtpPacket({ payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc: 1, payload: Buffer.alloc(160, 0xff) }), session.port, '127.0.0.1');
        await sleep(20);
      }
      await waitFor(() => toActual >= 5);
      assert.deepEqual(session.remoteDestination, { address: '127.0.0.1', port: actual.address().port, latched: true });
      const before = toAdvertised;
      intruder.send(serializeRtpPacket({ payloadType: 0, sequenceNumber: 9, timestamp: 0, ssrc: 2, payload: Buffer.alloc(160) }), session.port, '127.0.0.1');
      intruder.send(serializeRtpPacket({ payloadType: 0, sequenceNumber: 10, timestamp: 160, ssrc: 2, payload: Buffer.alloc(160) }), session.port, '127.0.0.1');
      await sleep(100);
      assert.equal(session.remoteDestination?.port, actual.address().port);
      assert.equal(toAdvertised, before);
      for (const s of [advertised, actual, intruder]) s.close();
    });
  });

  describe('jitter buffer on the wire', () => {
    it('plays a shuffled sender back in order', async () => {
      const peer = await udp();
      const answer = await service.answer(offerFrom(peer.address().port));
      assert.ok(answer.ok);
      const session = answer.session as MediaSession;
      const heard = collect(session);
      // Each packet carries a constant level, so order is visible after decoding.
      const levels = Array.from({ length: 30 }, (_, i) => 1000 + i * 500);
      const order = levels.map((_, i) => i);
      for (let i = 0; i + 1 < order.length; i += 2) [order[i], order[i + 1]] = [order[i + 1] ?? 0, order[i] ?? 0];
      // Paced like a real sender (absolute 20 ms schedule), but every pair of packets swapped.
      const start = Date.now();
      for (const [k, i] of order.entries()) {
        const payload = Buffer.alloc(FRAME_SAMPLES);
        pcmu.encode(new Int16Array(FRAME_SAMPLES).fill(levels[i] ?? 0), payload);
        peer.send(serializeRtpPacket({ payloadType: 0, sequenceNumber: (65520 + i) & 0xffff, timestamp: i * 160, ssrc: 3, payload }), session.port, '127.0.0.1');
        await sleep(Math.max(0, start + (k + 1) * 20 - Date.now()));
      }
      await sleep(200);
      heard.stop();
      const played = heard.frames.filter((f) => !f.concealed && (f.samples[0] ?? 0) > 0).map((f) => f.samples[0] ?? 0);
      const expected = levels.map((l) => throughG711(Int16Array.of(l))[0] ?? 0);
      assert.deepEqual(played, expected);
      assert.equal(session.jitterStats.late, 0);
      peer.close();
    });
  });

  describe('WAV prompt and recording', () => {
    it('plays a WAV into the call and records both directions to a stereo file', async () => {
      const { caller, agent } = await pair();
      const prompt = tone(4000, 700, 8000);
      const promptPath = join(dir, 'prompt.wav');
      await writeWav(promptPath, prompt);
      const recordingPath = join(dir, 'call.wav');
      await agent.startRecording(recordingPath);
      await caller.startRecording(join(dir, 'caller.wav'));
      assert.equal(await agent.playWav(promptPath), 'completed');
      await sleep(200);
      await agent.stopRecording();
      await caller.stopRecording();
      const file = await readFile(recordingPath);
      assert.equal(file.readUInt16LE(22), 2);
      const stereo = new Int16Array(file.buffer.slice(file.byteOffset + 44, file.byteOffset + file.length));
      const right = stereo.filter((_, i) => i % 2 === 1);
      // The agent side (right) is the prompt itself, sample for sample.
      const start = firstNonSilent(right) - firstNonSilent(prompt);
      assert.deepEqual(right.subarray(start, start + 4000), prompt);
      // What the caller heard (its left channel) is the prompt through G.711, sample for sample.
      const callerFile = await readFile(join(dir, 'caller.wav'));
      const callerStereo = new Int16Array(callerFile.buffer.slice(callerFile.byteOffset + 44, callerFile.byteOffset + callerFile.length));
      const left = callerStereo.filter((_, i) => i % 2 === 0);
      const heardStart = firstNonSilent(left);
      const expected = throughG711(prompt);
      const offset = heardStart - firstNonSilent(expected);
      assert.deepEqual(left.subarray(offset, offset + 4000), expected);
    });

    it('interrupts a prompt on abort (barge-in)', async () => {
      const { agent } = await pair();
      const promptPath = join(dir, 'long.wav');
      await writeWav(promptPath, tone(16000));
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const started = Date.now();
      assert.equal(await agent.playWav(promptPath, controller.signal), 'interrupted');
      assert.ok(Date.now() - started < 1000);
      assert.equal(agent.output.queuedMs, 0);
    });
  });

  describe('port exhaustion', () => {
    it('refuses a session with resource_exhausted (the gateway answers 503) and frees ports on close', async () => {
      const tiny = new MediaService({ bindAddress: '127.0.0.1', portMin: 47500, portMax: 47503 });
      try {
        const first = await tiny.offer();
        await tiny.offer();
        await assert.rejects(tiny.answer(first.localSdp), (e: unknown) => e instanceof AppError && e.code === 'resource_exhausted' && e.httpStatus === 429);
        await first.close();
        assert.equal(tiny.openSessions, 1);
        const again = await tiny.answer(offerFrom(4000));
        assert.ok(again.ok);
      } finally {
        await tiny.close();
      }
    });
  });

  describe('media timeout', () => {
    it('reports when the peer stops sending RTP', async () => {
      const short = new MediaService({ bindAddress: '127.0.0.1', portMin: 47200, portMax: 47299, timeouts: { rtpTimeoutMs: 300 } });
      try {
        const caller = await short.offer();
        const answer = await short.answer(caller.localSdp);
        assert.ok(answer.ok);
        caller.applyAnswer(answer.sdp);
        let fired = 0;
        answer.session.on('timeout', () => fired++);
        await sleep(400);
        assert.equal(fired, 0, 'RTP was flowing');
        await caller.close();
        await waitFor(() => fired === 1);
      } finally {
        await short.close();
      }
    });
  });
});
