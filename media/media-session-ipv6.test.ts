import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { pcmu } from './codecs/g711.js';
import { MediaService } from './media-service.js';
import type { MediaSession } from './media-session.js';
import { parseRtpPacket, serializeRtpPacket, type RtpPacket } from './rtp/rtp-packet.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const offer = (family: 4 | 6, address: string, port: number): string =>
  `v=0\r\no=- 5 5 IN IP${family} ${address}\r\ns=-\r\nc=IN IP${family} ${address}\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0 101\r\n` +
  'a=rtpmap:101 telephone-event/8000\r\n';

async function peer(type: 'udp4' | 'udp6', address: string): Promise<{ socket: Socket; packets: RtpPacket[] }> {
  const socket = createSocket(type);
  const packets: RtpPacket[] = [];
  socket.on('message', (m) => {
    const p = parseRtpPacket(m);
    if (p) packets.push(p);
  });
  socket.bind(0, address);
  await once(socket, 'listening');
  return { socket, packets };
}

/** Dual-stack media (docs/media.md, IPv6): `c=IN IP6` offers get an IPv6 socket and an IN IP6 answer. */
describe('MediaSession on IPv6 (::1)', () => {
  let service: MediaService;
  afterEach(async () => service?.close());

  it('answers an IPv6 offer from an IPv6 socket with IN IP6, and RTP flows both ways', async () => {
    service = new MediaService({ bindAddress: '127.0.0.1', bindAddress6: '::1', portMin: 47500, portMax: 47599 });
    const p = await peer('udp6', '::1');
    try {
      const answer = await service.answer(offer(6, '::1', p.socket.address().port));
      assert.ok(answer.ok, answer.ok ? '' : answer.message);
      assert.match(answer.sdp, /^o=- \d+ \d+ IN IP6 ::1\r$/m);
      assert.match(answer.sdp, /^c=IN IP6 ::1\r$/m);
      const session = answer.session as MediaSession;
      const heard: number[] = [];
      const reading = (async () => {
        for await (const f of session.input) if (!f.concealed) heard.push(f.samples[0] ?? 0);
      })();
      session.output.write(new Int16Array(1600).fill(2000));
      for (let k = 0; k < 10; k++) {
        const payload = new Uint8Array(160);
        pcmu.encode(new Int16Array(160).fill(-3000), payload);
        p.socket.send(serializeRtpPacket({ payloadType: 0, sequenceNumber: k + 1, timestamp: k * 160, ssrc: 9, payload, marker: k === 0 }), session.port, '::1');
        await sleep(20);
      }
      const deadline = Date.now() + 3000;
      while ((heard.length < 5 || p.packets.length < 5) && Date.now() < deadline) await sleep(20);
      await session.close();
      await reading;
      assert.ok(p.packets.length >= 5, `${p.packets.length} packets reached the IPv6 peer`);
      assert.ok(heard.length >= 5 && heard.every((v) => v < -2000), `${heard.length} frames heard from the IPv6 peer: ${heard.join(' ')}`);
    } finally {
      p.socket.close();
    }
  });

  it('keeps IPv4 offers on IPv4 in the same service', async () => {
    service = new MediaService({ bindAddress: '127.0.0.1', bindAddress6: '::1', portMin: 47600, portMax: 47699 });
    const answer = await service.answer(offer(4, '127.0.0.1', 40_000));
    assert.ok(answer.ok);
    assert.match(answer.sdp, /^c=IN IP4 127\.0\.0\.1\r$/m);
  });

  it('refuses an IPv6 offer with 488 when no IPv6 address is configured', async () => {
    service = new MediaService({ bindAddress: '127.0.0.1', portMin: 47700, portMax: 47799 });
    const answer = await service.answer(offer(6, '::1', 40_000));
    assert.ok(!answer.ok);
    assert.equal(answer.sipStatus, 488);
    assert.equal(answer.message, 'offer has no usable RTP/AVP audio stream on an IPv4 address');
  });
});
