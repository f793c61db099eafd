import assert from 'node:assert/strict';
import { pcma, pcmu, FRAME_SAMPLES } from './g711.js';

const encodeOne = (codec: typeof pcmu, sample: number): number => {
  const out = new Uint8Array(1);
  codec.encode(Int16Array.of(sample), out);
  return out[0] ?? -1;
};
const decodeOne = (codec: typeof pcmu, code: number): number => codec.decode(Uint8Array.of(code))[0] ?? NaN;

function snrDb(reference: Int16Array, actual: Int16Array): number {
  let signal = 0;
  let noise = 0;
  for (let i = 0; i < reference.length; i++) {
    const r = reference[i] ?? 0;
    signal += r * r;
    noise += (r - (actual[i] ?? 0)) ** 2;
  }
  return 10 * Math.log10(signal / noise);
}

describe('G.711', () => {
  describe('mu-law (PCMU) known vectors', () => {
    it('encodes zero as 0xFF and the extremes to the end codewords', () => {
      assert.equal(encodeOne(pcmu, 0), 0xff);
      assert.equal(encodeOne(pcmu, 32767), 0x80);
      assert.equal(encodeOne(pcmu, -32768), 0x00);
      assert.equal(encodeOne(pcmu, -1), 0x7f);
    });
    it('decodes codewords to the G.711 reconstruction levels', () => {
      assert.equal(decodeOne(pcmu, 0xff), 0);
      assert.equal(decodeOne(pcmu, 0x7f), 0);
      assert.equal(decodeOne(pcmu, 0x80), 32124);
      assert.equal(decodeOne(pcmu, 0x00), -32124);
      assert.equal(decodeOne(pcmu, 0xfe), 8);
      assert.equal(decodeOne(pcmu, 0xef), 132);
    });
  });

  describe('A-law (PCMA) known vectors', () => {
    it('encodes zero as 0xD5 and the extremes to the end codewords', () => {
      assert.equal(encodeOne(pcma, 0), 0xd5);
      assert.equal(encodeOne(pcma, -1), 0x55);
      assert.equal(encodeOne(pcma, 32767), 0xaa);
      assert.equal(encodeOne(pcma, -32768), 0x2a);
    });
    it('decodes codewords to the G.711 reconstruction levels', () => {
      assert.equal(decodeOne(pcma, 0xd5), 8);
      assert.equal(decodeOne(pcma, 0x55), -8);
      assert.equal(decodeOne(pcma, 0xaa), 32256);
      assert.equal(decodeOne(pcma, 0x2a), -32256);
    });
  });

  for (const codec of [pcmu, pcma]) {
    describe(`${codec.name} round trip`, () => {
      it('re-encodes every decoded codeword to itself (except the duplicate zero)', () => {
        for (let code = 0; code < 256; code++) {
          const back = encodeOne(codec, decodeOne(codec, code));
          if (codec === pcmu && code === 0x7f) continue; // -0 and +0 both decode to 0
          assert.equal(back, code, `codeword ${code.toString(16)}`);
        }
      });
      it('keeps a 20 ms 1 kHz tone above 35 dB SNR', () => {
        const tone = new Int16Array(FRAME_SAMPLES);
        for (let i = 0; i < tone.length; i++) tone[i] = Math.round(12000 * Math.sin((2 * Math.PI * 1000 * i) / 8000 + 0.3));
        const wire = new Uint8Array(FRAME_SAMPLES);
        assert.equal(codec.encode(tone, wire), FRAME_SAMPLES);
        assert.ok(snrDb(tone, codec.decode(wire)) > 35);
      });
      it('is monotonic over the whole 16-bit range', () => {
        let previous = -Infinity;
        for (let s = -32768; s <= 32767; s += 7) {
          const level = decodeOne(codec, encodeOne(codec, s));
          assert.ok(level >= previous, `not monotonic at ${s}`);
          previous = level;
        }
      });
    });
  }
});
