import { WavFileWriter } from '../wav/wav.js';

const FRAMES_PER_WRITE = 50;

/**
 * Records both directions into one stereo WAV, caller (received) on the left channel and agent
 * (sent) on the right, frame-aligned on the media tick so the two sides stay in sync. Samples are
 * interleaved into a one-second block that is handed to the writer when full. A wideband (G.722)
 * call is recorded at 16 kHz, everything else at 8 kHz.
 */
export class StereoWavRecorder {
  private readonly frameSamples: number;
  private readonly block: Int16Array;
  private frames = 0;

  private constructor(
    private readonly writer: WavFileWriter,
    readonly sampleRate: 8000 | 16000,
  ) {
    this.frameSamples = sampleRate / 50;
    this.block = new Int16Array(this.frameSamples * 2 * FRAMES_PER_WRITE);
  }

  static async create(path: string, sampleRate: 8000 | 16000 = 8000): Promise<StereoWavRecorder> {
    return new StereoWavRecorder(await WavFileWriter.create(path, 2, sampleRate), sampleRate);
  }

  /** One tick: what was heard and what was said at the recording's rate (undefined = silence). */
  add(received: Int16Array | undefined, sent: Int16Array | undefined): void {
    const frameSamples = this.frameSamples;
    const base = this.frames * frameSamples * 2;
    for (let i = 0; i < frameSamples; i++) {
      this.block[base + i * 2] = received ? (received[i] ?? 0) : 0;
      this.block[base + i * 2 + 1] = sent ? (sent[i] ?? 0) : 0;
    }
    if (++this.frames === FRAMES_PER_WRITE) this.flush();
  }

  async stop(): Promise<void> {
    this.flush();
    await this.writer.close();
  }

  private flush(): void {
    if (this.frames === 0) return;
    this.writer.write(this.block.subarray(0, this.frames * this.frameSamples * 2));
    this.frames = 0;
  }
}
