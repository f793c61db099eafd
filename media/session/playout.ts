import type { AudioFrame } from '../../core/ports/media.js';
import type { RtpAudioCodec } from '../codecs/audio-codec.js';
import type { AdaptiveDelay } from '../rtp/adaptive-delay.js';
import type { JitterBuffer } from '../rtp/jitter-buffer.js';

const FRAME_MS = 20;
/** Up to this many stand-in frames before the stream resumed count as lateness, more as a pause. */
const LATE_NOT_PAUSE_FRAMES = 5;
/** Past this without a packet the peer is quiet whatever our own lateness (VAD must see time pass). */
const STALL_LIMIT_MS = 300;

/** Where playout hands each 20 ms frame (already a fresh copy, owned by the receiver), at the codec's rate. */
export type FrameSink = (frame: AudioFrame) => void;

/** A frame quieter than this mean magnitude counts as silence for the adaptive delay. */
const SILENT_MEAN_ABS = 200;

/**
 * Turns jitter-buffer slots into 20 ms frames, whatever the peer's packet size, as soon as they
 * can be played (eager playout).
 *
 * `drain` runs on every arriving packet: in-order audio is decoded and handed on at once, so the
 * listener (VAD, endpointing, STT, a bridge) never waits for a playout clock; a hole is waited for
 * the adaptive target delay, then concealed. `tick` runs every 20 ms: it ends hole waits that are
 * due and, once audio has started and nothing has arrived for a packet time plus the target delay,
 * emits silent frames marked concealed, so consumers keep a 20 ms clock while the peer pauses.
 * Those stand-in frames do not consume sequence numbers (a peer that resumes after a pause plays
 * on), but a hole found right after them was already covered and is skipped without a wait.
 *
 * Decoded samples go through a small FIFO and a frame leaves only when 160 samples are there, so
 * 10, 20, 30 or 40 ms packets are all cut into 20 ms frames (a 30 ms sender: three frames per two
 * packets). A hole becomes PLC-lite (the last 20 ms at half level once, then silence) of the last
 * packet's size; event and CN slots become plain silence.
 */
export class Playout {
  private readonly fifo: Int16Array;
  /** 1 where the sample was synthesised rather than decoded. */
  private readonly synthetic: Uint8Array;
  private length = 0;
  private packetSamples: number;
  private readonly lastHeard: Int16Array;
  private heardAny = false;
  private concealedRun = 0;
  private started = false;
  /** When the last frame was handed on (ms), the base of the pause clock. */
  private lastFrameAt = 0;
  /** Stand-in frames emitted since the last packet played: their time is already concealed. */
  private covered = 0;

  /**
   * `pauseGraceMs`: how long past a packet time nothing may arrive before stand-in frames start
   * (at least the adaptive target). A stand-in that turns out to have been a late packet is an
   * extra 20 ms inside the caller's speech, which recognisers notice; a peer that really stops
   * sending is rare (DTX), so noticing it a little later costs little. Default 60 ms.
   */
  constructor(
    private readonly jitter: JitterBuffer,
    private readonly delay: AdaptiveDelay,
    private readonly pauseGraceMs = 60,
    /** Samples per 20 ms frame: 160 (8 kHz, G.711) or 320 (16 kHz, G.722). */
    private readonly frameSamples = 160,
  ) {
    this.fifo = new Int16Array(frameSamples * 8);
    this.synthetic = new Uint8Array(frameSamples * 8);
    this.lastHeard = new Int16Array(frameSamples);
    this.packetSamples = frameSamples;
  }

  /**
   * Plays what can be played now. `wanted` false (nobody listens or records) still consumes the
   * slots but allocates no frame.
   */
  drain(codec: RtpAudioCodec, now: number, wanted: boolean, sink: FrameSink): void {
    const waitMs = this.delay.targetMs;
    for (;;) {
      while (this.length < this.frameSamples) {
        const slot = this.jitter.popReady(now, this.covered > 0 ? 0 : waitMs);
        if (!slot) break;
        this.started = true;
        if (slot.kind === 'packet') {
          // Stand-ins followed at once by the next packet: it was late, not a pause. Wait longer.
          if (this.covered > 0 && this.covered <= LATE_NOT_PAUSE_FRAMES) this.delay.onLate();
          this.covered = 0;
          if (slot.payload) this.appendDecoded(codec, slot.payload);
          else this.appendSilence(this.packetSamples, false);
        } else if (this.covered > 0) {
          // The peer's pause was already filled with stand-in frames: no second concealment.
          this.covered--;
        } else {
          this.appendConcealment();
        }
      }
      if (this.length < this.frameSamples) return;
      this.emit(wanted, sink);
      this.lastFrameAt = now;
    }
  }

  /**
   * The 20 ms clock: due hole waits, and stand-in frames while the peer sends nothing.
   * `standIns` false (a catch-up tick after the process stalled) holds them back unless the peer
   * has been quiet for long: what looks like its silence may be our own stall.
   */
  tick(codec: RtpAudioCodec, now: number, wanted: boolean, sink: FrameSink, standIns = true): void {
    this.drain(codec, now, wanted, sink);
    if (!this.started || this.jitter.waiting > 0) return;
    if (!standIns && now - this.lastFrameAt < STALL_LIMIT_MS) return;
    const waitMs = Math.max(this.delay.targetMs, this.pauseGraceMs);
    // At most a few per tick: after a long stall the pause clock restarts rather than flooding.
    for (let n = 0; n < 3 && now - this.lastFrameAt >= FRAME_MS + waitMs; n++) {
      if (this.length > 0) this.appendSilence(this.frameSamples - this.length, true);
      else {
        this.appendSilence(this.frameSamples, true);
        this.covered++;
      }
      this.emit(wanted, sink);
      this.lastFrameAt += FRAME_MS;
    }
    if (now - this.lastFrameAt >= FRAME_MS + waitMs) this.lastFrameAt = now - waitMs;
  }

  private emit(wanted: boolean, sink: FrameSink): void {
    const frameSamples = this.frameSamples;
    let concealed = false;
    let sum = 0;
    for (let i = 0; i < frameSamples; i++) {
      if (this.synthetic[i]) concealed = true;
      const v = this.fifo[i]!;
      sum += v < 0 ? -v : v;
    }
    // Shrink the wait only while the line is quiet (never mid-word).
    if (concealed || sum / frameSamples < SILENT_MEAN_ABS) this.delay.onSilence(FRAME_MS);
    if (wanted) sink({ samples: this.fifo.slice(0, frameSamples), concealed });
    this.fifo.copyWithin(0, frameSamples, this.length);
    this.synthetic.copyWithin(0, frameSamples, this.length);
    this.length -= frameSamples;
  }

  private appendDecoded(codec: RtpAudioCodec, payload: Buffer): void {
    const octets = Math.min(payload.length, Math.floor((this.fifo.length - this.length) / codec.samplesPerOctet));
    const n = octets * codec.samplesPerOctet;
    if (n <= 0) return;
    codec.decode(payload.subarray(0, octets), this.fifo.subarray(this.length, this.length + n));
    this.synthetic.fill(0, this.length, this.length + n);
    // Keep the last 20 ms for concealment.
    const frameSamples = this.frameSamples;
    const tailFrom = this.length + n - Math.min(n, frameSamples);
    this.lastHeard.fill(0);
    this.lastHeard.set(this.fifo.subarray(tailFrom, this.length + n), frameSamples - Math.min(n, frameSamples));
    this.heardAny = true;
    this.packetSamples = n;
    this.concealedRun = 0;
    this.length += n;
  }

  private appendSilence(samples: number, synthetic: boolean): void {
    const n = Math.min(samples, this.fifo.length - this.length);
    this.fifo.fill(0, this.length, this.length + n);
    this.synthetic.fill(synthetic ? 1 : 0, this.length, this.length + n);
    this.length += n;
  }

  private appendConcealment(): void {
    const start = this.length;
    this.appendSilence(this.packetSamples, true);
    if (!this.heardAny || this.concealedRun++ > 0) return;
    for (let i = start; i < this.length; i++) this.fifo[i] = (this.lastHeard[(i - start) % this.frameSamples] ?? 0) >> 1;
  }
}
