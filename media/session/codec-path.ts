import type { AudioFrame } from '../../core/ports/media.js';
import { createCodec, type CodecName, type RtpAudioCodec } from '../codecs/audio-codec.js';
import { FRAME_SAMPLES } from '../codecs/g711.js';
import { Downsampler, Upsampler } from '../codecs/half-band.js';

/** 20 ms of 8 kHz silence: what an idle wideband session upsamples and encodes. */
const SILENCE = new Int16Array(FRAME_SAMPLES);

/** 8 kHz audio for a 16 kHz recording when the codec became narrowband after it started (a re-INVITE). */
export const widen = (s: Int16Array): Int16Array => Int16Array.from({ length: s.length * 2 }, (_, i) => s[i >> 1] as number);

/**
 * A session's negotiated codec, both directions, and the rate changes that keep the rest of the
 * session at 8 kHz (docs/media.md, G.722): readers get 8 kHz frames with a wideband call's
 * 16 kHz original beside them, and the agent's 8 kHz audio is upsampled before a wideband encoder.
 * A new codec (re-INVITE) gets a new CodecPath: fresh ADPCM state and filter history.
 */
export class CodecPath {
  readonly tx: RtpAudioCodec;
  readonly rx: RtpAudioCodec;
  private readonly down: Downsampler | undefined;
  private readonly up: Upsampler | undefined;

  constructor(readonly name: CodecName) {
    this.tx = createCodec(name);
    this.rx = createCodec(name);
    const wideband = this.rx.sampleRate === 16000;
    this.down = wideband ? new Downsampler() : undefined;
    this.up = wideband ? new Upsampler() : undefined;
  }

  /** What readers get of a decoded frame: 8 kHz, with the 16 kHz original for a wideband codec. */
  toReaders(decoded: AudioFrame): AudioFrame {
    if (!this.down || decoded.samples.length <= FRAME_SAMPLES) return decoded;
    return { samples: this.down.process(decoded.samples), concealed: decoded.concealed, wideband: decoded.samples };
  }

  /**
   * Encodes 20 ms of the agent's 8 kHz audio (undefined: silence) into `packet` at `offset`; returns
   * the 16 kHz audio a wideband codec encoded (silence too goes through, so the ADPCM state and the
   * filter's history run on without a gap).
   */
  encode(frame: Int16Array | undefined, packet: Uint8Array, offset: number): Int16Array | undefined {
    const wide = this.up?.process(frame ?? SILENCE);
    this.tx.encode(wide ?? frame ?? SILENCE, packet, offset);
    return wide;
  }
}
