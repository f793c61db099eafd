import type { AudioFrame } from '../../core/ports/media.js';
import { FRAME_SAMPLES, type G711Codec } from '../codecs/g711.js';
import type { JitterBuffer } from '../rtp/jitter-buffer.js';

const FIFO_SAMPLES = FRAME_SAMPLES * 8;

/**
 * Turns jitter-buffer slots into one 20 ms frame per tick, whatever the peer's packet size.
 *
 * Decoded samples go through a small FIFO and a packet is taken from the jitter buffer only when
 * the FIFO holds less than a frame, so 10, 20, 30 or 40 ms packets are all consumed at the rate
 * they are produced (a 30 ms sender: two packets per three ticks). A hole becomes PLC-lite
 * (the last 20 ms at half level once, then silence) of the last packet's size; event and CN slots
 * become plain silence. Once audio has started an empty buffer still yields a silent frame
 * marked concealed, so consumers keep a steady 20 ms clock.
 */
export class Playout {
  private readonly fifo = new Int16Array(FIFO_SAMPLES);
  /** 1 where the sample was synthesised rather than decoded. */
  private readonly synthetic = new Uint8Array(FIFO_SAMPLES);
  private length = 0;
  private packetSamples = FRAME_SAMPLES;
  private readonly lastHeard = new Int16Array(FRAME_SAMPLES);
  private heardAny = false;
  private concealedRun = 0;
  private started = false;

  constructor(private readonly jitter: JitterBuffer) {}

  /** One tick. Returns a new frame when `wanted` (someone listens or records), else undefined. */
  next(codec: G711Codec, wanted: boolean): AudioFrame | undefined {
    while (this.length < FRAME_SAMPLES) {
      const slot = this.jitter.pop();
      if (!slot) break;
      this.started = true;
      if (slot.kind === 'packet' && slot.payload) this.appendDecoded(codec, slot.payload);
      else if (slot.kind === 'packet') this.appendSilence(this.packetSamples, false);
      else this.appendConcealment();
    }
    if (!this.started) return undefined;
    if (this.length === 0) {
      // Underrun: the peer paused or the buffer is re-priming. Keep the clock.
      return wanted ? { samples: new Int16Array(FRAME_SAMPLES), concealed: true } : undefined;
    }
    // A partial frame left over before an underrun goes out padded rather than lost.
    if (this.length < FRAME_SAMPLES) this.appendSilence(FRAME_SAMPLES - this.length, true);
    let frame: AudioFrame | undefined;
    if (wanted) {
      let concealed = false;
      for (let i = 0; i < FRAME_SAMPLES; i++) if (this.synthetic[i]) concealed = true;
      frame = { samples: this.fifo.slice(0, FRAME_SAMPLES), concealed };
    }
    this.fifo.copyWithin(0, FRAME_SAMPLES, this.length);
    this.synthetic.copyWithin(0, FRAME_SAMPLES, this.length);
    this.length -= FRAME_SAMPLES;
    return frame;
  }

  private appendDecoded(codec: G711Codec, payload: Buffer): void {
    const n = Math.min(payload.length, FIFO_SAMPLES - this.length);
    if (n <= 0) return;
    codec.decode(payload.subarray(0, n), this.fifo.subarray(this.length, this.length + n));
    this.synthetic.fill(0, this.length, this.length + n);
    // Keep the last 20 ms for concealment.
    const tailFrom = this.length + n - Math.min(n, FRAME_SAMPLES);
    this.lastHeard.fill(0);
    this.lastHeard.set(this.fifo.subarray(tailFrom, this.length + n), FRAME_SAMPLES - Math.min(n, FRAME_SAMPLES));
    this.heardAny = true;
    this.packetSamples = n;
    this.concealedRun = 0;
    this.length += n;
  }

  private appendSilence(samples: number, synthetic: boolean): void {
    const n = Math.min(samples, FIFO_SAMPLES - this.length);
    this.fifo.fill(0, this.length, this.length + n);
    this.synthetic.fill(synthetic ? 1 : 0, this.length, this.length + n);
    this.length += n;
  }

  private appendConcealment(): void {
    const start = this.length;
    this.appendSilence(this.packetSamples, true);
    if (!this.heardAny || this.concealedRun++ > 0) return;
    for (let i = start; i < this.length; i++) this.fifo[i] = (this.lastHeard[(i - start) % FRAME_SAMPLES] ?? 0) >> 1;
  }
}
