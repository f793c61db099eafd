import { FRAME_SAMPLES } from '../codecs/g711.js';
import { WavFileWriter } from '../wav/wav.js';

const FRAMES_PER_WRITE = 50;

/**
 * Records both directions into one stereo WAV, caller (received) on the left channel and agent
 * (sent) on the right, frame-aligned on the media tick so the two sides stay in sync. Samples are
 * interleaved into a one-second block that is handed to the writer when full.
 */
export class CallRecorder {
  private block = new Int16Array(FRAME_SAMPLES * 2 * FRAMES_PER_WRITE);
  private frames = 0;

  private constructor(private readonly writer: WavFileWriter) {}

  static async create(path: string): Promise<CallRecorder> {
    return new CallRecorder(await WavFileWriter.create(path, 2));
  }

  /** One tick: what was heard and what was said (undefined = silence). */
  add(received: Int16Array | undefined, sent: Int16Array | undefined): void {
    const base = this.frames * FRAME_SAMPLES * 2;
    for (let i = 0; i < FRAME_SAMPLES; i++) {
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
    this.writer.write(this.block.subarray(0, this.frames * FRAME_SAMPLES * 2));
    this.frames = 0;
  }
}
