import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { encodeWav } from '../wav/wav.js';
import { G722Decoder, G722Encoder } from './g722.js';

/** Debian's ffmpeg (its G.722 follows the ITU reference), by absolute path. */
const ffmpeg = '/usr/bin/ffmpeg';

/** 3 s at 16 kHz: a 200 Hz - 7.5 kHz sweep, a burst at full scale (saturation paths), noise, silence. */
function testSignal(): Int16Array {
  const out = new Int16Array(48_000);
  let seed = 12345;
  const noise = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed / 2 ** 32) * 2 - 1;
  };
  let phase = 0;
  for (let i = 0; i < out.length; i++) {
    const t = i / 16_000;
    phase += (2 * Math.PI * (200 + 7300 * (t / 3))) / 16_000;
    const burst = t > 1.2 && t < 1.4 ? 40_000 : 12_000;
    const v = t > 2.7 ? 0 : burst * Math.sin(phase) + 1500 * noise();
    out[i] = Math.max(-32768, Math.min(32767, Math.round(v)));
  }
  return out;
}

describe('G.722 codec (ITU-T G.722, 64 kbit/s)', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(path.join(tmpdir(), 'g722-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('encodes bit-exactly as ffmpeg does', () => {
    const pcm = testSignal();
    writeFileSync(path.join(dir, 'in.wav'), encodeWav(pcm, 1, 16_000));
    execFileSync(ffmpeg, ['-loglevel', 'error', '-y', '-i', path.join(dir, 'in.wav'), '-acodec', 'g722', '-f', 'g722', path.join(dir, 'ref.g722')]);
    const reference = readFileSync(path.join(dir, 'ref.g722'));
    const ours = new Uint8Array(pcm.length / 2);
    // In 20 ms packets, as RTP carries it: the state runs on across calls.
    const encoder = new G722Encoder();
    for (let at = 0; at < pcm.length; at += 320) encoder.encode(pcm.subarray(at, at + 320), ours, at / 2);
    assert.equal(ours.length, reference.length);
    const first = ours.findIndex((b, i) => b !== reference[i]);
    assert.equal(first, -1, `first differing octet at ${first}`);
  });

  it('decodes bit-exactly as ffmpeg does', () => {
    const codes = new Uint8Array(24_000);
    new G722Encoder().encode(testSignal(), codes);
    writeFileSync(path.join(dir, 'ours.g722'), codes);
    execFileSync(ffmpeg, ['-loglevel', 'error', '-y', '-f', 'g722', '-i', path.join(dir, 'ours.g722'), '-f', 's16le', '-acodec', 'pcm_s16le', path.join(dir, 'ref.raw')]);
    const raw = readFileSync(path.join(dir, 'ref.raw'));
    const reference = new Int16Array(raw.buffer, raw.byteOffset, raw.length / 2);
    const decoder = new G722Decoder();
    const ours = new Int16Array(codes.length * 2);
    for (let at = 0; at < codes.length; at += 160) decoder.decode(codes.subarray(at, at + 160), ours.subarray(at * 2, at * 2 + 320));
    assert.equal(ours.length, reference.length);
    const first = ours.findIndex((v, i) => v !== reference[i]);
    assert.equal(first, -1, `first differing sample at ${first}: ${ours[first]} vs ${reference[first]}`);
  });

  it('keeps a 6 kHz tone (above the 4 kHz of G.711) after a round trip', () => {
    const pcm = new Int16Array(16_000);
    for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 6000 * i) / 16_000));
    const codes = new Uint8Array(8000);
    new G722Encoder().encode(pcm, codes);
    const out = new G722Decoder().decode(codes);
    // The codec's QMF delay is 22 samples; compare power after it settles.
    let signal = 0;
    let error = 0;
    for (let i = 2000; i < 15_000; i++) {
      signal += (pcm[i] as number) ** 2;
      error += ((out[i + 22] as number) - (pcm[i] as number)) ** 2;
    }
    const snr = 10 * Math.log10(signal / error);
    assert.ok(snr > 10, `SNR ${snr.toFixed(1)} dB`);
  });
});
