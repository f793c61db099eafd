import { failedPrecondition } from '../../core/errors.js';
import { StereoWavRecorder } from './stereo-wav-recorder.js';

/**
 * A media session's call recording (RTP and provider streams alike): received frames arrive with
 * the network's timing and sent ones with the output's, so each direction waits in its own short
 * queue and one pair is written per media tick, which keeps the two channels in step. A queue
 * longer than its bound means that side's clock runs fast: its oldest frame is dropped.
 */
export class SessionRecording {
  private recorder: StereoWavRecorder | undefined;
  private readonly heard: Int16Array[] = [];
  private readonly sent: (Int16Array | undefined)[] = [];

  constructor(
    private readonly maxHeardPending: number,
    private readonly maxSentPending: number,
  ) {}

  get active(): boolean {
    return this.recorder !== undefined;
  }

  /** The file's rate while recording (16 kHz for a wideband call), else undefined. */
  get sampleRate(): 8000 | 16000 | undefined {
    return this.recorder?.sampleRate;
  }

  /** Opens the file; `closed` is asked again once it is open, since the session may close meanwhile. */
  async start(path: string, sampleRate: 8000 | 16000, closed: () => boolean): Promise<void> {
    if (this.recorder) throw failedPrecondition('already recording');
    if (closed()) throw failedPrecondition('media session is closed');
    const recorder = await StereoWavRecorder.create(path, sampleRate);
    if (closed() || this.recorder) {
      await recorder.stop();
      throw failedPrecondition(closed() ? 'media session closed while the recording opened' : 'already recording');
    }
    this.recorder = recorder;
  }

  async stop(): Promise<void> {
    const recorder = this.recorder;
    this.recorder = undefined;
    await recorder?.stop();
  }

  /** A received frame at the recording's rate (ignored when not recording). */
  addHeard(samples: Int16Array): void {
    if (!this.recorder) return;
    this.heard.push(samples);
    if (this.heard.length > this.maxHeardPending) this.heard.shift();
  }

  /** A sent frame (undefined: silence), in a buffer of its own: callers reuse theirs. */
  addSent(samples: Int16Array | undefined): void {
    if (this.recorder) this.sent.push(samples);
  }

  /** Sent audio the far end dropped unheard (a provider's clear) leaves the recording too. */
  dropSent(): void {
    this.sent.length = 0;
  }

  /** One recorded frame per tick and direction. */
  tick(): void {
    const recorder = this.recorder;
    if (!recorder) {
      this.heard.length = 0;
      this.sent.length = 0;
      return;
    }
    recorder.add(this.heard.shift(), this.sent.shift());
    if (this.sent.length > this.maxSentPending) this.sent.shift();
  }
}
