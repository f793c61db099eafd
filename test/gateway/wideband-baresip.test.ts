import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ActiveCall, CallHandler } from '../../core/ports/call-handler.js';
import type { AudioFrame } from '../../core/ports/media.js';
import type { Call } from '../../gateway/call/call.js';
import { encodeWav } from '../../media/wav/wav.js';
import { runBaresip } from '../helpers/baresip.js';
import { tone, toneSeconds } from '../helpers/tones.js';
import { numbers, startGatewayFixture, type GatewayFixture } from './gateway-harness.js';

/** Keeps the caller's frames and plays a 1 kHz tone to it. */
class WidebandHandler implements CallHandler {
  readonly calls: Array<{ call: ActiveCall; frames: AudioFrame[] }> = [];
  async handle(call: ActiveCall): Promise<void> {
    const seen = { call, frames: [] as AudioFrame[] };
    this.calls.push(seen);
    call.media.output.write(tone(1000, 3, 8000));
    for await (const frame of call.media.input) {
      if (call.signal.aborted) break;
      if (!frame.concealed) seen.frames.push(frame);
    }
  }
}

const join = (parts: readonly Int16Array[]): Int16Array => {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
};

/** Wideband (docs/media.md, G.722) with Debian's baresip and its g722 module. */
describe('G.722 calls with baresip', function () {
  this.timeout(60_000);
  let fx: GatewayFixture;
  let dir: string;
  const handler = new WidebandHandler();

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'wideband-'));
    // The caller: 300 Hz and 6 kHz at 16 kHz; 6 kHz exists only on a wideband path.
    const caller = tone(300, 6, 16_000, 6000).map((v, i) => v + Math.round(6000 * Math.sin((2 * Math.PI * 6000 * i) / 16_000)));
    writeFileSync(path.join(dir, 'caller.wav'), encodeWav(caller, 1, 16_000));
    fx = await startGatewayFixture({ callHandler: handler, ringMs: 0 });
  });
  after(async () => {
    await fx?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('negotiates G.722 when the caller prefers it, and carries 16 kHz both ways', async () => {
    const run = await runBaresip({
      account: '<sip:+919800000004@127.0.0.1>;regint=0;audio_codecs=G722/16000/1,PCMU',
      dial: `sip:${numbers.trunkDid}@${fx.target}`,
      sourceWav: path.join(dir, 'caller.wav'),
      seconds: 5,
    });
    try {
      const seen = handler.calls[0];
      assert.ok(seen, `no call reached the handler; baresip said:\n${run.output}`);
      assert.equal(seen.call.media.codec, 'G722');
      assert.match((seen.call as Call).sdp.localSdp, /^m=audio \d+ RTP\/AVP 9 101\r$/m);
      // The platform's readers: 8 kHz frames with the 16 kHz original; 6 kHz only in the latter.
      assert.ok(seen.frames.length > 100 && seen.frames.every((f) => f.wideband?.length === 320));
      const wide = join(seen.frames.map((f) => f.wideband as Int16Array));
      assert.ok(toneSeconds(wide, 6000, 16_000, 0.3) >= 2, `6 kHz for ${toneSeconds(wide, 6000, 16_000, 0.3)} s`);
      assert.ok(toneSeconds(wide, 300, 16_000, 0.3) >= 2, `300 Hz for ${toneSeconds(wide, 300, 16_000, 0.3)} s`);
      // baresip decoded our G.722 (its dump is at 16 kHz).
      assert.ok(run.decoded, `no decoded dump; baresip said:\n${run.output}`);
      const file = readFileSync(run.decoded);
      assert.equal(file.readUInt32LE(24), 16_000);
      const got = new Int16Array(file.buffer.slice(file.byteOffset + 44, file.byteOffset + file.length));
      assert.ok(toneSeconds(got, 1000, 16_000) >= 1.5, `1 kHz for ${toneSeconds(got, 1000, 16_000)} s`);
    } finally {
      run.cleanup();
    }
  });
});
