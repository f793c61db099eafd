import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { metricsRegistry } from '../core/metrics.js';
import { pcmu } from './codecs/g711.js';
import { MediaService } from './media-service.js';
import type { MediaSession } from './media-session.js';
import { serializeRtpPacket } from './rtp/rtp-packet.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One unlabelled series (a histogram's `_count` when `series` says so), as Prometheus would scrape it. */
async function value(name: string, series = name): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric(name)?.get();
  const v = metric?.values.find((s) => ((s as { metricName?: string }).metricName ?? name) === series);
  return v?.value ?? 0;
}

const offer = (port: number): string => `v=0\r\no=- 5 5 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0\r\na=sendrecv\r\n`;

/**
 * Issue 14: RTP packets, loss and jitter on /metrics, aggregated over the process and read from
 * the sessions at scrape time (nothing counted per packet beside what the session already counts).
 */
describe('RTP metrics (real UDP)', () => {
  it('counts packets both ways and the ones lost, keeps them after the session closes, and reports its jitter', async () => {
    const service = new MediaService({ bindAddress: '127.0.0.1', portMin: 47600, portMax: 47699 });
    const peer = createSocket('udp4');
    peer.bind(0, '127.0.0.1');
    await once(peer, 'listening');
    const before = {
      received: await value('vap_rtp_packets_received_total'),
      sent: await value('vap_rtp_packets_sent_total'),
      lost: await value('vap_rtp_packets_lost_total'),
      sessions: await value('vap_rtp_session_jitter_seconds', 'vap_rtp_session_jitter_seconds_count'),
    };
    try {
      const answer = await service.answer(offer(peer.address().port));
      assert.ok(answer.ok);
      const session = answer.session as MediaSession;
      let frames = 0;
      void (async () => {
        for await (const _frame of session.input) frames++;
      })();
      const payload = Buffer.alloc(160);
      pcmu.encode(new Int16Array(160).fill(2000), payload);
      const start = Date.now();
      // 30 packets at 20 ms; 10 and 11 never arrive.
      for (let seq = 0; seq < 30; seq++) {
        if (seq !== 10 && seq !== 11) peer.send(serializeRtpPacket({ payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc: 77, payload }), session.port, '127.0.0.1');
        await sleep(Math.max(0, start + (seq + 1) * 20 - Date.now()));
      }
      const deadline = Date.now() + 3_000;
      while ((frames < 32 || (await value('vap_rtp_packets_lost_total')) < before.lost + 2) && Date.now() < deadline) await sleep(20);

      assert.equal(await value('vap_rtp_packets_received_total'), before.received + 28);
      assert.equal(await value('vap_rtp_packets_lost_total'), before.lost + 2, 'the two missing packets, concealed at playout');
      assert.ok((await value('vap_rtp_packets_sent_total')) > before.sent, 'the session sends (silence when idle)');
      const jitter = await value('vap_rtp_jitter_seconds');
      assert.ok(jitter >= 0 && jitter < 0.2, `jitter ${jitter} s`);

      await session.close();
      assert.equal(await value('vap_rtp_packets_received_total'), before.received + 28, 'a closed session\'s packets stay counted');
      assert.equal(await value('vap_rtp_session_jitter_seconds', 'vap_rtp_session_jitter_seconds_count'), before.sessions + 1);
    } finally {
      peer.close();
      await service.close();
    }
  });
});
