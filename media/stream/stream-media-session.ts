import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { failedPrecondition } from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import type { AudioFrame, CallMediaSession, MediaSessionEvents, PlaybackOutcome, SdpResult } from '../../core/ports/media.js';
import { TypedEmitter } from '../../core/typed-emitter.js';
import { FRAME_MS, FRAME_SAMPLES } from '../codecs/g711.js';
import type { PacingScheduler, Tickable } from '../rtp/pacing-scheduler.js';
import { closeSessionParts } from '../session/session-close.js';
import { SessionRecording } from '../session/session-recording.js';
import { FrameQueue } from '../session/frame-queue.js';
import { readWav } from '../wav/wav.js';
import { StreamOutput } from './stream-output.js';

/**
 * The provider side of a media stream (a WebSocket speaking one provider's JSON frames): the
 * session hands it agent audio, marks and clears; the provider adapter encodes them.
 */
export interface StreamTransport {
  /** 20 ms of agent audio, 8 kHz 16-bit PCM (the adapter encodes it: mu-law, linear16...). */
  sendAudio(frame: Int16Array): void;
  /** A named position in the agent audio; the provider echoes it once the audio before it has played. */
  sendMark(name: string): void;
  /** The provider drops the agent audio it has buffered (barge-in). */
  sendClear(): void;
  /** The agent stopped talking: an adapter that batches frames sends what it holds. */
  flush?(): void;
}

export interface StreamMediaSessionOptions {
  /** Agent audio kept in the provider's buffer ahead of playout (absorbs network jitter; cleared on barge-in). */
  readonly leadMs?: number;
  /** A mark every this many frames while the agent talks (and one at the end of each talkspurt). */
  readonly markEveryFrames?: number;
  /** No caller audio for this long (while a stream is attached) emits `timeout`; 0 disables. */
  readonly mediaTimeoutMs?: number;
  /** The encoding the provider names, reported as `codec` (e.g. `audio/x-mulaw`). */
  readonly codec?: string;
  readonly logger?: Logger;
}

const MARK_PREFIX = 'vap-';
/** Frames of caller audio waiting for the recording tick; providers that send 100 ms chunks need room for five. */
const MAX_HEARD_PENDING = 10;

/**
 * `CallMediaSession` over a provider's bidirectional media stream instead of RTP, so the voice
 * pipeline and the recipe runtime run unchanged on provider calls. Caller audio arrives in
 * chunks of any length (a reliable, ordered transport: no jitter buffer) and is cut into 20 ms
 * frames at once; agent audio is taken from the output queue on the shared 20 ms media clock
 * and sent `leadMs` ahead of playout; marks report how far the provider has played, which is
 * what `output.queuedMs` counts at barge-in; `output.clear()` also clears the provider's buffer.
 * The transport may be detached and another attached (a stream reconnecting): the session, its
 * readers and its recording carry on.
 */
export class StreamMediaSession extends TypedEmitter<MediaSessionEvents> implements CallMediaSession, Tickable {
  readonly id = randomUUID();
  readonly localSdp = '';
  readonly output = new StreamOutput();
  readonly codec: string;
  readonly stats = { framesIn: 0, framesOut: 0, marksSent: 0, marksEchoed: 0, clears: 0 };
  private readonly inputQueue = new FrameQueue(50);
  private readonly leadFrames: number;
  private readonly markEveryFrames: number;
  private readonly logger: Logger;
  private transport: StreamTransport | undefined;
  /** Caller samples short of a whole frame, kept for the next chunk. */
  private partial = new Int16Array(FRAME_SAMPLES);
  private partialLength = 0;
  private sentFrames = 0;
  private framesSinceMark = 0;
  /** Marks echoed for positions at or before this were dropped by a clear, not played. */
  private clearedAtFrame = 0;
  private talking = false;
  private lastMediaAt = performance.now();
  private timeoutReported = false;
  private readonly recording: SessionRecording;
  private closed = false;

  constructor(
    private readonly scheduler: PacingScheduler,
    private readonly options: StreamMediaSessionOptions = {},
  ) {
    super();
    this.codec = options.codec ?? 'audio/x-mulaw';
    this.leadFrames = Math.max(1, Math.round((options.leadMs ?? 100) / FRAME_MS));
    // The provider holds up to the lead of sent audio before playing it: the recording waits as long.
    this.recording = new SessionRecording(MAX_HEARD_PENDING, this.leadFrames + 2);
    this.markEveryFrames = options.markEveryFrames ?? 10;
    this.logger = options.logger ?? silentLogger;
    this.output.onFrameReady = () => this.pump(false);
    this.output.onClear = () => this.clearRemote();
    scheduler.add(this);
  }

  get input(): AsyncIterable<AudioFrame> {
    return this.inputQueue;
  }

  get attached(): boolean {
    return this.transport !== undefined;
  }

  /** The provider's stream is up (first connection or a reconnection): agent audio flows to it. */
  attach(transport: StreamTransport): void {
    if (this.closed) throw failedPrecondition('media session is closed');
    this.transport = transport;
    this.lastMediaAt = performance.now();
    this.timeoutReported = false;
    // What the old stream held in the provider's buffer is gone with it.
    this.output.remoteMs = 0;
    this.clearedAtFrame = this.sentFrames;
  }

  /** The stream dropped: agent audio waits in our queue until a stream is attached again. */
  detach(): void {
    this.transport = undefined;
    this.output.remoteMs = 0;
    this.partialLength = 0;
  }

  /** Caller audio from the provider, 8 kHz PCM of any length: cut into 20 ms frames for the readers. */
  receiveAudio(pcm: Int16Array): void {
    if (this.closed) return;
    this.lastMediaAt = performance.now();
    this.timeoutReported = false;
    let offset = 0;
    while (offset < pcm.length) {
      const take = Math.min(FRAME_SAMPLES - this.partialLength, pcm.length - offset);
      this.partial.set(pcm.subarray(offset, offset + take), this.partialLength);
      this.partialLength += take;
      offset += take;
      if (this.partialLength === FRAME_SAMPLES) {
        const samples = this.partial;
        this.partial = new Int16Array(FRAME_SAMPLES);
        this.partialLength = 0;
        this.heard(samples);
      }
    }
  }

  /** A key the caller pressed, as the provider reported it (no duration on most streams). */
  receiveDtmf(digit: string, durationMs = 0): void {
    if (!this.closed) this.emit('dtmf', { digit, durationMs, endSeen: true });
  }

  /** The provider played the agent audio up to one of our marks (or dropped it on a clear). */
  receiveMark(name: string): void {
    if (!name.startsWith(MARK_PREFIX)) return;
    const at = Number(name.slice(MARK_PREFIX.length));
    if (!Number.isSafeInteger(at)) return;
    this.stats.marksEchoed++;
    if (at <= this.clearedAtFrame) return;
    // Everything sent after the mark still waits in the provider's buffer.
    this.output.remoteMs = Math.max(0, (this.sentFrames - at) * FRAME_MS);
  }

  update(): SdpResult {
    return { ok: false, reason: 'malformed', message: 'a provider media stream has no SDP to renegotiate', sipStatus: 400 };
  }

  reoffer(): string {
    throw failedPrecondition('a provider media stream has no SDP to re-offer');
  }

  applyAnswer(): SdpResult {
    return this.update();
  }

  async playWav(path: string, signal?: AbortSignal): Promise<PlaybackOutcome> {
    return this.output.play([await readWav(path)], signal);
  }

  sendDtmf(): Promise<void> {
    return Promise.reject(failedPrecondition("a provider media stream cannot send DTMF (the stream protocol has no message for it)"));
  }

  startRecording(path: string): Promise<void> {
    return this.recording.start(path, 8000, () => this.closed);
  }

  stopRecording(): Promise<void> {
    return this.recording.stop();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.transport = undefined;
    await closeSessionParts({ scheduler: this.scheduler, session: this, output: this.output, input: this.inputQueue, recording: this.recording });
    this.emit('closed');
  }

  onTick(): void {
    if (this.closed) return;
    // The provider played one more frame of what it held.
    this.output.remoteMs = Math.max(0, this.output.remoteMs - FRAME_MS);
    this.pump(true);
    this.recording.tick();
    this.checkTimeout();
  }

  /**
   * Sends agent frames while the provider holds less than the lead. Outside a tick only whole
   * frames go (a partial frame waits one tick for the rest of a streamed TTS chunk, as on RTP).
   */
  private pump(onTick: boolean): void {
    const transport = this.transport;
    if (!transport || this.closed) return;
    while (this.output.remoteMs < this.leadFrames * FRAME_MS) {
      if (!onTick && this.output.localFrames === 0) break;
      const frame = this.output.take();
      if (!frame) break;
      // The queue reuses its frame buffer: the transport and the recording get their own copy.
      const copy = frame.slice();
      transport.sendAudio(copy);
      this.output.remoteMs += FRAME_MS;
      this.sentFrames++;
      this.stats.framesOut++;
      this.recording.addSent(copy);
      this.talking = true;
      if (++this.framesSinceMark >= this.markEveryFrames) this.mark(transport);
    }
    if (onTick && this.talking && this.output.localMs === 0) {
      // End of a talkspurt: send what a batching adapter holds, and mark where the audio ends.
      this.talking = false;
      transport.flush?.();
      if (this.framesSinceMark > 0) this.mark(transport);
    }
  }

  private mark(transport: StreamTransport): void {
    this.framesSinceMark = 0;
    this.stats.marksSent++;
    transport.sendMark(`${MARK_PREFIX}${this.sentFrames}`);
  }

  private clearRemote(): void {
    this.clearedAtFrame = this.sentFrames;
    this.framesSinceMark = 0;
    this.talking = false;
    // The agent audio the provider dropped was never heard: it leaves the recording too.
    this.recording.dropSent();
    if (this.closed || !this.transport) return;
    this.stats.clears++;
    this.transport.sendClear();
  }

  private heard(samples: Int16Array): void {
    this.stats.framesIn++;
    const frame: AudioFrame = { samples, concealed: false };
    this.inputQueue.push(frame);
    this.recording.addHeard(samples);
  }

  private checkTimeout(): void {
    const limit = this.options.mediaTimeoutMs ?? 0;
    if (limit <= 0 || this.timeoutReported || !this.transport) return;
    const silentMs = performance.now() - this.lastMediaAt;
    if (silentMs < limit) return;
    this.timeoutReported = true;
    this.logger.info({ session: this.id, silentMs: Math.round(silentMs) }, 'no caller audio on the media stream');
    this.emit('timeout', { silentMs: Math.round(silentMs), onHold: false });
  }
}
