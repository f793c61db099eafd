import assert from 'node:assert/strict';
import { silentLogger } from '../../core/logger.js';
import { relayAudio } from '../../gateway/transfer/bridge.js';
import { MediaService } from '../../media/media-service.js';
import { captureLogs } from '../helpers/log-capture.js';

const tone = (n: number): Int16Array => Int16Array.from({ length: n }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));

/** The B2BUA relay between two real media sessions (RTP over loopback). */
describe('B2BUA audio relay: a failing direction keeps its cause', function () {
  this.timeout(20_000);
  let media: MediaService;

  before(() => {
    const portMin = 46_000 + 2 * Math.floor(Math.random() * 1000);
    media = new MediaService({ bindAddress: '127.0.0.1', portMin, portMax: portMin + 40, logger: silentLogger });
  });
  after(async () => {
    await media?.close();
  });

  it('an error in the caller-to-target direction is kept in the stats and logged once as a warning', async () => {
    // The caller's phone (far) sends RTP to the caller leg; the target leg is a second session.
    const far = await media.offer({ callId: 'far' });
    const answered = await media.answer(far.localSdp, { callId: 'caller' });
    assert.ok(answered.ok);
    const caller = answered.session;
    assert.ok(far.applyAnswer(answered.sdp).ok);
    const target = await media.offer({ callId: 'target' });
    const logs = captureLogs();
    const stop = new AbortController();
    let frames = 0;
    const broken = new Error('silence timer store unavailable');
    const stats = relayAudio(caller, target, stop.signal, () => {
      frames += 1;
      if (frames === 3) throw broken;
    }, logs.logger);
    try {
      const deadline = Date.now() + 10_000;
      while (!stats.failure && Date.now() < deadline) {
        far.output.write(tone(160));
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.deepEqual(stats.failure, { direction: 'caller-to-target', cause: broken });
      const warned = logs.find('bridge relay failed');
      assert.equal(warned.length, 1, JSON.stringify(logs.lines));
      assert.equal(warned[0]?.level, 'warn');
      assert.equal(warned[0]?.direction, 'caller-to-target');
      assert.match(String((warned[0]?.err as { message?: string } | undefined)?.message), /silence timer store unavailable/);
      assert.equal(stats.callerToTarget, 3, 'that direction stopped at the failing frame');
    } finally {
      stop.abort();
      await Promise.all([far.close(), caller.close(), target.close()]);
    }
  });
});
