import type { SttStream, Transcript } from './speech-provider.js';
import { concat, noiseSeeds, SpanWatch, speechSpanBounds, upperBandDb, withLineNoise } from './recogniser-audio.js';
import { upsample2x } from './resampler.js';
import { recogniserMetrics } from './recogniser/recogniser-metrics.js';

/** The decoder's reading of one utterance. */
export type Reading = Omit<Transcript, 'final'>;

/**
 * Recognises one utterance: the turn's speech span at 16 kHz under each noise realisation (as
 * many as asked for), on `signal` (aborted when the call ends, the stream is dropped, or an early
 * decoding turned out to be of the wrong audio).
 */
export type Recognise = (realisations: readonly Int16Array[], signal: AbortSignal) => Promise<Reading>;

export interface OfflineUtteranceOptions {
  readonly signal: AbortSignal;
  readonly recognise: Recognise;
  /** Noise realisations to decode the turn under (recogniser-audio.ts: why two). */
  readonly realisations: number;
  /** Peak level of the upper-band noise; the floor under the speech is a third of it. */
  readonly noiseLevel: number;
  /** Whether an early decoding may start now (the recogniser has a worker to spare). */
  readonly mayDecodeEarly: () => boolean;
}

/**
 * Quiet after the last speech frame before the turn is decoded early, while the endpointer still
 * waits out its silence (700 ms by default). The decoder is given the speech span only (up to
 * 150 ms after the last speech frame), so the audio it needs is complete by then; if speech comes
 * back, the early decoding is dropped and the turn decoded again at its end. Shorter, and more
 * pauses inside a sentence would cost a decode thrown away.
 */
export const EARLY_DECODE_QUIET_MS = 250;

/**
 * Upper band (4.2-7 kHz) this far below the telephone band, or further: the speech was narrowband
 * before the G.722 leg (recogniser-audio.ts upperBandDb: 16 kHz voices -10 to -25 dB, an 8 kHz
 * voice -28 to -30, on the tuning split's flite voices).
 */
const NARROWBAND_SOURCE_DB = -27;

/**
 * A caller turn for the offline recogniser. It is not streaming in the decoder's sense (the turn
 * is decoded as one utterance), but it starts decoding as soon as the caller has fallen quiet for
 * `EARLY_DECODE_QUIET_MS`: the reading is then usually ready, or nearly, when the endpointer
 * ends the turn. `finish` uses it when the speech span did not change since; else it decodes the
 * turn as it ended. Either way the reading is that of the turn's span, the same audio.
 */
export class OfflineUtterance implements SttStream {
  private readonly chunks: Int16Array[] = [];
  /** The same audio at 16 kHz, while every chunk came with it (a G.722 call). */
  private wideChunks: Int16Array[] | undefined = [];
  private readonly listeners: ((t: Transcript) => void)[] = [];
  private readonly watch = new SpanWatch();
  private aborted = false;
  /** Aborted by `abort()`: the turn's decodings stop with it. */
  private readonly dropped = new AbortController();
  /** An early decoding was started and dropped (speech came back): for the metrics. */
  private droppedEarly = false;
  private early: { readonly changes: number; readonly bounds: Bounds; readonly stop: AbortController; readonly reading: Promise<Reading> } | undefined;

  constructor(private readonly options: OfflineUtteranceOptions) {}

  push(samples: Int16Array, wideband?: Int16Array): void {
    if (this.aborted) return;
    const copy = samples.slice();
    this.chunks.push(copy);
    if (wideband && wideband.length === 2 * samples.length) this.wideChunks?.push(wideband.slice());
    else this.wideChunks = undefined;
    this.watch.push(copy);
    if (this.early && this.early.changes !== this.watch.changes) this.dropEarly();
    if (!this.early && this.watch.quietMs() >= EARLY_DECODE_QUIET_MS && !this.options.signal.aborted && this.options.mayDecodeEarly()) this.decodeEarly();
  }

  onTranscript(listener: (t: Transcript) => void): void {
    this.listeners.push(listener);
  }

  abort(): void {
    this.aborted = true;
    this.chunks.length = 0;
    this.wideChunks = undefined;
    this.dropEarly();
    this.dropped.abort();
  }

  async finish(): Promise<string> {
    if (this.aborted || this.options.signal.aborted) return '';
    const pcm = concat(this.chunks);
    const bounds = speechSpanBounds(pcm);
    const early = this.early;
    let reading: Reading;
    if (early && early.bounds.start === bounds.start && early.bounds.end === bounds.end) {
      recogniserMetrics.earlyReadings.labels('used').inc();
      reading = await early.reading;
    } else {
      recogniserMetrics.earlyReadings.labels(this.droppedEarly || early ? 'dropped' : 'not-started').inc();
      this.dropEarly();
      reading = await this.options.recognise(this.prepare(pcm, bounds), AbortSignal.any([this.options.signal, this.dropped.signal]));
    }
    if (this.aborted || this.options.signal.aborted) return '';
    for (const l of this.listeners) l({ ...reading, final: true });
    return reading.text;
  }

  private decodeEarly(): void {
    const pcm = concat(this.chunks);
    const bounds = speechSpanBounds(pcm);
    const stop = new AbortController();
    const reading = this.options.recognise(this.prepare(pcm, bounds), AbortSignal.any([this.options.signal, this.dropped.signal, stop.signal]));
    // Dropped readings are never awaited: their failure must not surface as an unhandled rejection.
    reading.catch(() => undefined);
    this.early = { changes: this.watch.changes, bounds, stop, reading };
  }

  private dropEarly(): void {
    if (!this.early) return;
    this.early.stop.abort();
    this.early = undefined;
    this.droppedEarly = true;
  }

  /**
   * The span at 16 kHz under each noise realisation. A wideband call's own 16 kHz audio is used
   * as it came when its upper band carries speech (not the empty band of upsampled G.711 that the
   * hiss fills); only the low floor is laid under it, so digital silence is never what the model
   * hears. Speech that was narrowband before it reached the G.722 leg (an 8 kHz voice, a G.711
   * call transcoded on the way) has nothing up there but codec noise, and takes the 8 kHz path
   * the thresholds were tuned on: with its dead band as it came, flite kal's hearings fell from
   * 24 to 21 right of 29 with 2 wrong (bench/hearing-accuracy.ts --codec g722).
   */
  private prepare(pcm: Int16Array, bounds: Bounds): Int16Array[] {
    const level = this.options.noiseLevel;
    const wide = this.wideChunks && this.wideChunks.length === this.chunks.length ? concat(this.wideChunks).subarray(2 * bounds.start, 2 * bounds.end) : undefined;
    const wideband = wide !== undefined && upperBandDb(wide) > NARROWBAND_SOURCE_DB;
    const speech = wideband ? wide : upsample2x(pcm.subarray(bounds.start, bounds.end));
    return noiseSeeds.slice(0, this.options.realisations).map((seed) => withLineNoise(speech, seed, wideband ? 0 : level, level / 3));
  }
}

type Bounds = ReturnType<typeof speechSpanBounds>;
