import assert from 'node:assert/strict';
import { createSocket, Socket } from 'node:dgram';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { AudioFrame } from '../core/ports/media.js';
import { pcmu } from './codecs/g711.js';
import { MediaService } from './media-service.js';
import type { MediaSession } from './media-session.js';
import { parseRtpPacket, serializeRtpPacket, type RtpPacket } from './rtp/rtp-packet.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Received extends RtpPacket {
  readonly at: number;
}

async function peerSocket(): Promise<{ socket: Socket; packets: Received[] }> {
  const socket = createSocket('udp4');
  const packets: Received[] = [];
  socket.on('message', (m) => {
    const p = parseRtpPacket(m);
    if (p) packets.push({ ...p, at: performance.now() });
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return { socket, packets };
}

async function waitFor(predicate: () => boolean, timeoutMs = 3000): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > until) throw new Error('timed out waiting for condition');
    await sleep(5);
  }
}

/** Resolves just after the session's tick, so the next one is about 20 ms away. */
async function justAfterTick(service: MediaService): Promise<void> {
  const tick = service.scheduler.stats.ticks;
  await waitFor(() => service.scheduler.stats.ticks > tick);
}

const offer = (port: number): string =>
  `v=0\r\no=- 5 5 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0\r\na=sendrecv\r\n`;

const loud = (n: number): Buffer => {
  const out = Buffer.alloc(160);
  pcmu.encode(new Int16Array(160).fill(1000 + n * 100), out);
  return out;
};

describe('MediaSession latency (real UDP)', () => {
  let service: MediaService;
  beforeEach(() => {
    service = new MediaService({ bindAddress: '127.0.0.1', portMin: 47400, portMax: 47499 });
  });
  afterEach(async () => {
    await service.close();
  });

  describe('first packet of a reply', () => {
    it('leaves as soon as the audio is queued, then keeps 20 ms pacing with continuous sequence numbers and timestamps', async () => {
      const peer = await peerSocket();
      const answer = await service.answer(offer(peer.socket.address().port));
      assert.ok(answer.ok);
      const session = answer.session as MediaSession;
      await waitFor(() => peer.packets.length >= 3); // idle silence is flowing
      // Which tick had run when each packet to the peer was handed to the kernel: measured at the
      // send itself, so a loaded machine that delivers it late to the peer cannot blur it.
      const sent: Array<{ loud: boolean; ticks: number }> = [];
      const socketSend = Socket.prototype.send;
      const peerPort = peer.socket.address().port;
      Socket.prototype.send = function (this: Socket, ...args: Parameters<Socket['send']>) {
        const [msg, port] = args as unknown as [Buffer, number];
        const payload = Buffer.isBuffer(msg) ? parseRtpPacket(msg)?.payload : undefined;
        if (port === peerPort && payload) sent.push({ loud: payload[0] !== pcmu.silenceByte, ticks: service.scheduler.stats.ticks });
        return socketSend.apply(this, args);
      } as Socket['send'];
      let ticksAtQueue: number;
      try {
        // Not right before a tick (there the session waits for it on purpose).
        do await justAfterTick(service);
        while (service.scheduler.nextDueAt - performance.now() < 5);
        ticksAtQueue = service.scheduler.stats.ticks;
        const playing = session.output.play([new Int16Array(800).fill(4000)]);
        await waitFor(() => peer.packets.some((p) => p.payload[0] !== pcmu.silenceByte));
        await playing;
      } finally {
        Socket.prototype.send = socketSend;
      }
      const first = sent.find((x) => x.loud);
      assert.equal(first?.ticks, ticksAtQueue, `the first reply packet left after ${(first?.ticks ?? NaN) - ticksAtQueue} more ticks, not before the next one`);
      await sleep(100);
      session.output.clear();
      await session.close();
      peer.socket.close();
      const p = peer.packets;
      for (let i = 1; i < p.length; i++) {
        assert.equal((p[i]!.sequenceNumber - p[i - 1]!.sequenceNumber) & 0xffff, 1, `sequence gap at ${i}`);
        const step = (p[i]!.timestamp - p[i - 1]!.timestamp) >>> 0;
        if (service.scheduler.stats.skippedTicks === 0) assert.equal(step, 160, `timestamp step ${step} at ${i}`);
        else assert.ok(step % 160 === 0 && step >= 160);
      }
      assert.equal(p.filter((x) => x.marker).length, 1, 'one talkspurt: idle silence runs on');
    });

    it('never runs more than one slot ahead of the 20 ms clock while a reply streams in just in time', async () => {
      const peer = await peerSocket();
      const ticksAt: number[] = [];
      peer.socket.on('message', () => ticksAt.push(service.scheduler.stats.ticks));
      const answer = await service.answer(offer(peer.socket.address().port));
      assert.ok(answer.ok);
      const session = answer.session as MediaSession;
      await waitFor(() => peer.packets.length >= 2);
      // Written in 20 ms pieces just in time (some a little late): an idle tick may let the next
      // piece go out at once, but the stream never gets ahead of the clock by more than a slot.
      const pieces = (async function* () {
        for (let i = 0; i < 15; i++) {
          yield new Int16Array(160).fill(3000);
          await sleep(i % 4 === 3 ? 26 : 20);
        }
      })();
      const from = peer.packets.length;
      await session.output.play(pieces);
      await sleep(60);
      const reply = peer.packets.map((p, i) => ({ p, ticks: ticksAt[i] ?? 0 })).slice(from).filter((x) => x.p.payload[0] !== pcmu.silenceByte);
      assert.equal(reply.length, 15);
      const first = reply[0]!;
      reply.forEach((x, i) => {
        assert.ok(x.ticks - first.ticks >= i - 1, `reply packet ${i} after only ${x.ticks - first.ticks} ticks`);
        assert.equal((x.p.timestamp - first.p.timestamp) >>> 0 >= i * 160, true);
      });
      const all = peer.packets;
      for (let i = 1; i < all.length; i++) assert.equal((all[i]!.sequenceNumber - all[i - 1]!.sequenceNumber) & 0xffff, 1);
      peer.socket.close();
    });
  });

  describe('caller audio', () => {
    it('reaches input when the packet arrives, not at the next tick', async () => {
      const peer = await peerSocket();
      const answer = await service.answer(offer(peer.socket.address().port));
      assert.ok(answer.ok);
      const session = answer.session as MediaSession;
      const heard: { at: number; level: number }[] = [];
      void (async () => {
        for await (const f of session.input) if (!f.concealed) heard.push({ at: performance.now(), level: f.samples[0] ?? 0 });
      })();
      const sentAt: number[] = [];
      const start = performance.now();
      for (let seq = 0; seq < 40; seq++) {
        sentAt.push(performance.now());
        peer.socket.send(serializeRtpPacket({ payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc: 5, payload: loud(seq % 8) }), session.port, '127.0.0.1');
        await sleep(Math.max(0, start + (seq + 1) * 20 - performance.now()));
      }
      await waitFor(() => heard.length >= 40);
      // After the stream's start (held briefly for reordering), each frame follows its packet at once.
      const delays = heard.slice(10, 40).map((h, i) => h.at - (sentAt[i + 10] ?? 0)).sort((a, b) => a - b);
      const median = delays[Math.floor(delays.length / 2)] ?? Infinity;
      assert.ok(median < 5, `median packet -> input ${median.toFixed(1)} ms`);
      assert.deepEqual(heard.map((h) => h.level), Array.from({ length: 40 }, (_, i) => pcmu.decode(loud(i % 8))[0]));
      assert.ok(session.receiveDelay.targetMs <= 60);
      peer.socket.close();
    });

    it('gives every reader its own queue: a bridge and the conversation both hear every frame', async () => {
      const peer = await peerSocket();
      const answer = await service.answer(offer(peer.socket.address().port));
      assert.ok(answer.ok);
      const session = answer.session as MediaSession;
      const read = (into: AudioFrame[], stopAfter: number): void => {
        void (async () => {
          for await (const f of session.input) {
            if (!f.concealed) into.push(f);
            if (into.length >= stopAfter) break;
          }
        })();
      };
      const ear: AudioFrame[] = [];
      const bridge: AudioFrame[] = [];
      const leaver: AudioFrame[] = [];
      read(ear, 20);
      read(bridge, 20);
      read(leaver, 5);
      const start = performance.now();
      for (let seq = 0; seq < 20; seq++) {
        peer.socket.send(serializeRtpPacket({ payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc: 5, payload: loud(seq % 8) }), session.port, '127.0.0.1');
        await sleep(Math.max(0, start + (seq + 1) * 20 - performance.now()));
      }
      await waitFor(() => ear.length >= 20 && bridge.length >= 20);
      assert.deepEqual(ear.map((f) => f.samples[0]), bridge.map((f) => f.samples[0]));
      assert.equal(leaver.length, 5, 'a reader that stops gets no more and takes nothing from the others');
      peer.socket.close();
    });
  });
});
