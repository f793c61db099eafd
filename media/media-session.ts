import { randomBytes, randomUUID } from 'node:crypto';
import type { RemoteInfo } from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { AppError, failedPrecondition, invalidArgument } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type {
  AudioFrame,
  CallMediaSession,
  MediaSessionEvents,
  MediaTimeouts,
  PlaybackOutcome,
  SdpResult,
} from '../core/ports/media.js';
import { TypedEmitter } from '../core/typed-emitter.js';
import { FRAME_SAMPLES } from './codecs/g711.js';
import { DtmfReceiver, isDtmfDigit, writeTelephoneEvent } from './dtmf/rfc4733.js';
import { AdaptiveDelay } from './rtp/adaptive-delay.js';
import { JitterBuffer } from './rtp/jitter-buffer.js';
import type { PacingScheduler, Tickable } from './rtp/pacing-scheduler.js';
import type { RtpPortLease } from './rtp/port-pool.js';
import { parseRtpPacket, RTP_HEADER_BYTES, writeRtpHeader } from './rtp/rtp-packet.js';
import { SourceSelector } from './rtp/source-selector.js';
import { SymmetricRtpLatch, type LatchOptions } from './rtp/symmetric-latch.js';
import type { MediaCapabilities, NegotiatedAudio } from './sdp/offer-answer.js';
import type { Direction } from './sdp/sdp.js';
import { DtmfSender } from './session/dtmf-sender.js';
import { closeSessionParts } from './session/session-close.js';
import { LocalSdp } from './session/local-sdp.js';
import { SessionRecording } from './session/session-recording.js';
import { CodecPath, widen } from './session/codec-path.js';
import { FrameQueue } from './session/frame-queue.js';
import { OutputQueue } from './session/output-queue.js';
import { Playout } from './session/playout.js';
import { readWav } from './wav/wav.js';

export interface MediaSessionConfig {
  readonly capabilities: MediaCapabilities;
  readonly jitterDepth: number;
  readonly timeouts: MediaTimeouts;
  /** Keep sending silence when nothing is queued (keeps NAT bindings and the peer's latch alive). */
  readonly sendSilenceWhenIdle: boolean;
  readonly latch?: LatchOptions;
  /** Frames kept for a slow `input` consumer before the oldest are dropped. */
  readonly inputQueueFrames?: number;
}

export interface MediaSessionStats {
  packetsSent: number;
  packetsReceived: number;
  malformedPackets: number;
  unexpectedPayloadType: number;
  socketErrors: number;
}

const CN_PAYLOAD_TYPE = 13;
const FRAME_MS = 20;

const sends = (audio: NegotiatedAudio): boolean => audio.direction === 'sendrecv' || audio.direction === 'sendonly';

/** One call's RTP endpoint; see docs/media.md for the data flow. */
export class MediaSession extends TypedEmitter<MediaSessionEvents> implements CallMediaSession, Tickable {
  readonly id = randomUUID();
  readonly output = new OutputQueue();
  readonly stats: MediaSessionStats = { packetsSent: 0, packetsReceived: 0, malformedPackets: 0, unexpectedPayloadType: 0, socketErrors: 0 };
  private readonly inputQueue: FrameQueue;
  private readonly jitter: JitterBuffer;
  private readonly delay: AdaptiveDelay;
  private player: Playout;
  private readonly onHeard = (frame: AudioFrame): void => this.heard(frame);
  private readonly sources = new SourceSelector();
  private readonly dtmfIn: DtmfReceiver;
  private readonly ssrc = randomBytes(4).readUInt32BE(0);
  private seq = randomBytes(2).readUInt16BE(0);
  private readonly timestampBase = randomBytes(4).readUInt32BE(0);
  private startTick = -1;
  /** The tick last run: an early packet takes the next tick's slot. */
  private lastTick = -1;
  /** 1 while an early packet keeps this talkspurt one slot ahead of the clock (see sendEarly). */
  private lead = 0;
  /** The last packet time carried no agent audio (the output was idle). */
  private idle = true;
  /** A few received frames may wait for the tick; more means the peer's clock runs fast. */
  private readonly recording = new SessionRecording(3, 2);
  private talkspurt = false;
  private audio: NegotiatedAudio | undefined;
  /** The negotiated codec, both directions, with a wideband call's rate changes. */
  private codecs: CodecPath | undefined;
  private latch: SymmetricRtpLatch | undefined;
  private readonly sdp: LocalSdp;
  private lastRtpAt = performance.now();
  private timeoutReported = false;
  private readonly dtmfOut = new DtmfSender();
  private closed = false;
  private lastErrorLogAt = -Infinity;

  constructor(
    private readonly lease: RtpPortLease,
    private readonly scheduler: PacingScheduler,
    private readonly config: MediaSessionConfig,
    private readonly logger: Logger = silentLogger,
  ) {
    super();
    this.sdp = new LocalSdp(config.capabilities, lease.port);
    this.inputQueue = new FrameQueue(config.inputQueueFrames ?? 50);
    this.jitter = new JitterBuffer({ depth: config.jitterDepth });
    // The configured depth is the wait for a missing packet until the line's jitter is measured.
    this.delay = new AdaptiveDelay({ initialMs: config.jitterDepth * 20 });
    this.player = new Playout(this.jitter, this.delay, config.jitterDepth * 20);
    this.output.onFrameReady = () => this.sendEarly();
    this.dtmfIn = new DtmfReceiver((e) => this.emit('dtmf', e));
    lease.socket.on('message', (msg, rinfo) => this.onDatagram(msg, rinfo));
    lease.socket.on('error', (error) => this.onSocketError(error));
  }

  get port(): number {
    return this.lease.port;
  }

  get localSdp(): string {
    return this.sdp.text;
  }

  get negotiated(): NegotiatedAudio | undefined {
    return this.audio;
  }

  /** Negotiated codec name (PCMU/PCMA/G722), undefined before negotiation. */
  get codec(): string | undefined {
    return this.codecs?.name;
  }

  get input(): AsyncIterable<AudioFrame> {
    return this.inputQueue;
  }

  /** How many readers iterate `input` now (each has its own queue). */
  get inputReaders(): number {
    return this.inputQueue.readerCount;
  }

  get remoteDestination(): { address: string; port: number; latched: boolean } | undefined {
    return this.latch && { address: this.latch.address, port: this.latch.port, latched: this.latch.latched };
  }

  get jitterStats(): JitterBuffer['stats'] {
    return this.jitter.stats;
  }

  /** The receive side's RFC 3550 jitter estimate and current wait for a missing packet (ms). */
  get receiveDelay(): { jitterMs: number; targetMs: number; lateGrowths: number } {
    return { jitterMs: this.delay.jitterMs, targetMs: this.delay.targetMs, lateGrowths: this.delay.lateGrowths };
  }

  /** Inbound call: answer the peer's offer. */
  answerOffer(offerSdp: string): SdpResult {
    return this.update(offerSdp);
  }

  /** Outbound call: our offer (apply the answer with `applyAnswer`). */
  makeOffer(): string {
    return this.sdp.offer();
  }

  update(offerSdp: string): SdpResult {
    const result = this.sdp.answer(offerSdp, this.audio !== undefined);
    if (!result.ok) return result;
    this.apply(result.audio);
    return { ok: true, sdp: result.sdp };
  }

  /**
   * A re-offer of our own (re-INVITE): hold with 'sendonly' (RFC 3264 sec. 8.4), resume with
   * 'sendrecv'. Send it, then hand the peer's answer to `applyAnswer`.
   */
  reoffer(direction: Direction): string {
    if (!this.audio) throw failedPrecondition('no negotiated media to re-offer');
    return this.sdp.reoffer(this.audio, direction);
  }

  applyAnswer(answerSdp: string): SdpResult {
    const result = this.sdp.acceptAnswer(answerSdp, this.audio?.mediaIndex ?? 0);
    if (!result.ok) return result;
    this.apply(result.audio);
    return { ok: true, sdp: this.sdp.text };
  }

  async playWav(path: string, signal?: AbortSignal): Promise<PlaybackOutcome> {
    const samples = await readWav(path);
    return this.output.play([samples], signal);
  }

  sendDtmf(digits: string, options: { readonly durationMs?: number } = {}): Promise<void> {
    if (this.closed) return Promise.reject(failedPrecondition('media session is closed'));
    if (this.audio?.telephoneEventPayloadType === undefined) {
      return Promise.reject(failedPrecondition('the peer did not negotiate telephone-event (RFC 4733)'));
    }
    if (!sends(this.audio)) return Promise.reject(failedPrecondition(`not sending media (${this.audio.direction})`));
    const chars = [...digits];
    if (chars.length === 0 || !chars.every(isDtmfDigit)) {
      return Promise.reject(invalidArgument('DTMF digits must be 0-9, *, #, A-D', [{ path: 'digits', message: digits }]));
    }
    return this.dtmfOut.send(chars, options.durationMs ?? 100);
  }

  startRecording(path: string): Promise<void> {
    // A wideband call is recorded at 16 kHz (docs/media.md, G.722).
    return this.recording.start(path, this.codecs?.rx.sampleRate ?? 8000, () => this.closed);
  }

  stopRecording(): Promise<void> {
    return this.recording.stop();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.dtmfOut.rejectAll(new AppError('canceled', 'media session closed'));
    await closeSessionParts({ scheduler: this.scheduler, session: this, output: this.output, input: this.inputQueue, recording: this.recording });
    await this.lease.release();
    this.emit('closed');
  }

  private apply(audio: NegotiatedAudio): void {
    const previous = this.audio;
    this.audio = audio;
    if (!sends(audio)) this.dtmfOut.rejectAll(failedPrecondition(`media direction became ${audio.direction}`));
    if (audio.codec !== previous?.codec) {
      this.codecs = new CodecPath(audio.codec);
      this.player = new Playout(this.jitter, this.delay, this.config.jitterDepth * 20, this.codecs.rx.frameSamples);
    }
    if (!this.latch) this.latch = new SymmetricRtpLatch(audio.remoteAddress, audio.remotePort, this.config.latch);
    else if (previous && (previous.remoteAddress !== audio.remoteAddress || previous.remotePort !== audio.remotePort)) {
      this.latch.reset(audio.remoteAddress, audio.remotePort);
    }
    this.lastRtpAt = performance.now();
    this.timeoutReported = false;
    if (!previous && !this.closed) {
      this.startTick = this.scheduler.currentTick;
      this.lastTick = this.startTick;
      this.scheduler.add(this);
    }
  }

  private onDatagram(msg: Buffer, rinfo: RemoteInfo): void {
    const audio = this.audio;
    if (!audio || this.closed) return;
    const packet = parseRtpPacket(msg);
    if (!packet) {
      this.stats.malformedPackets++;
      return;
    }
    const pt = packet.payloadType;
    if (pt !== audio.payloadType && pt !== audio.telephoneEventPayloadType && pt !== CN_PAYLOAD_TYPE) {
      this.stats.unexpectedPayloadType++;
      return;
    }
    const now = performance.now();
    if (!this.latch?.accept(rinfo.address, rinfo.port, packet.sequenceNumber, now)) return;
    this.stats.packetsReceived++;
    this.lastRtpAt = now;
    this.timeoutReported = false;
    if (audio.direction === 'sendonly' || audio.direction === 'inactive') return;
    const isEvent = pt === audio.telephoneEventPayloadType;
    // Events count whichever source sends them: a digit is never worth dropping.
    if (isEvent) this.dtmfIn.onPacket(packet.timestamp, packet.payload, now);
    const decision = this.sources.decide(packet.ssrc, packet.sequenceNumber, now);
    if (decision === 'drop') return;
    if (decision === 'switch') {
      this.jitter.restart();
      this.delay.restart();
    }
    // Event and comfort-noise packets occupy their sequence slot; playout fills it with silence.
    const pushed = this.jitter.push(packet.sequenceNumber, packet.timestamp, isEvent || pt === CN_PAYLOAD_TYPE ? null : packet.payload, now);
    if (pushed === 'concealed') this.delay.onLate();
    else if (pushed === 'resync') this.delay.restart();
    // Event packets repeat their start timestamp (RFC 4733 sec. 2.5.1.2): no jitter sample.
    if (!isEvent && pushed !== 'duplicate') this.delay.onArrival(now, packet.timestamp);
    const codec = this.codecs?.rx;
    // Eager playout: in-order audio goes to VAD/STT now, not at the next tick.
    if (codec) this.player.drain(codec, now, this.wantsFrames(), this.onHeard);
  }

  onTick(tick: number, now: number): void {
    const audio = this.audio;
    const codec = this.codecs;
    if (!audio || !codec || this.closed) return;
    this.lastTick = tick;
    // A catch-up tick after our own stall: the peer's packets of that time may still be in the
    // socket (a peer in this process has not even sent them yet), so its silence is not yet known.
    const catchingUp = now - this.scheduler.dueAt(tick) > FRAME_MS;
    this.player.tick(codec.rx, now, this.wantsFrames(), this.onHeard, !catchingUp);
    this.send(audio, codec, tick);
    this.recording.tick();
    this.dtmfIn.poll(now);
    this.checkTimeout(audio, now);
  }

  private wantsFrames(): boolean {
    return this.inputQueue.active || this.recording.active;
  }

  private heard(decoded: AudioFrame): void {
    // A wideband frame reaches readers at 8 kHz with its 16 kHz original beside it.
    const frame = this.codecs ? this.codecs.toReaders(decoded) : decoded;
    this.inputQueue.push(frame);
    const rate = this.recording.sampleRate;
    if (rate === undefined) return;
    this.recording.addHeard(rate === 16000 ? (frame.wideband ?? widen(frame.samples)) : frame.samples);
  }

  /**
   * The first frame of a reply goes out the moment it is queued when the output was idle, instead
   * of waiting up to 20 ms for the tick. It takes the next tick's slot (timestamp and sequence
   * stay continuous) and the talkspurt then runs one slot ahead of the clock at the usual 20 ms
   * pace; the first tick that finds nothing to send gives the slot back by sending nothing.
   */
  private sendEarly(): void {
    const audio = this.audio;
    const codec = this.codecs;
    const latch = this.latch;
    if (!audio || !codec || !latch || this.closed || !sends(audio)) return;
    if (this.lead > 0 || !this.idle || this.dtmfOut.busy) return;
    // Right before the tick there is nothing to gain, and two packets would leave back to back;
    // a tick already overdue (busy event loop) may still be far off, so then send now.
    const untilTick = this.scheduler.nextDueAt - performance.now();
    if (untilTick >= 0 && untilTick < 2) return;
    const frame = this.output.take();
    if (!frame) return;
    this.lead = 1;
    this.idle = false;
    this.sendAudio(audio, codec, latch, this.lastTick + 1, frame);
  }

  private send(audio: NegotiatedAudio, codec: CodecPath, tick: number): void {
    const latch = this.latch;
    if (!latch || !sends(audio)) {
      this.lead = 0;
      return;
    }
    // RFC 3550 sec. 5.1: the timestamp follows the sampling clock (160 per 20 ms tick), from a random base.
    const slot = tick + this.lead;
    const timestamp = (this.timestampBase + (slot - this.startTick) * FRAME_SAMPLES) >>> 0;
    const event = this.dtmfOut.take(timestamp, audio.telephoneEventPayloadType !== undefined);
    if (event && audio.telephoneEventPayloadType !== undefined) {
      if (event.step) {
        const packet = Buffer.allocUnsafe(RTP_HEADER_BYTES + 4);
        writeRtpHeader(packet, audio.telephoneEventPayloadType, event.step.marker, this.nextSeq(), event.timestamp, this.ssrc);
        writeTelephoneEvent(packet, RTP_HEADER_BYTES, event.step.event);
        this.transmit(packet, latch);
      }
      this.idle = false;
      return;
    }
    const frame = this.output.take();
    this.idle = frame === undefined;
    if (!frame && this.lead > 0) {
      // The reply ended while one slot ahead: this slot was already used, send nothing now.
      this.lead = 0;
      return;
    }
    if (!frame && !this.config.sendSilenceWhenIdle) {
      this.talkspurt = false;
      return;
    }
    this.sendAudio(audio, codec, latch, slot, frame);
  }

  private sendAudio(audio: NegotiatedAudio, codec: CodecPath, latch: SymmetricRtpLatch, slot: number, frame: Int16Array | undefined): void {
    // RFC 3551 sec. 4.5.2: G.722 too advances the timestamp by 160 per 20 ms (an 8000 clock).
    const timestamp = (this.timestampBase + (slot - this.startTick) * FRAME_SAMPLES) >>> 0;
    // 160 octets per 20 ms for G.711 and G.722 alike.
    const packet = Buffer.allocUnsafe(RTP_HEADER_BYTES + FRAME_SAMPLES);
    // RFC 3551 sec. 4.1: marker on the first packet of a talkspurt (the stream's first packet, or
    // the first after a pause when idle silence is not sent).
    writeRtpHeader(packet, audio.payloadType, !this.talkspurt, this.nextSeq(), timestamp, this.ssrc);
    // The agent's audio is 8 kHz; a wideband codec gets it upsampled.
    const wide = codec.encode(frame, packet, RTP_HEADER_BYTES);
    this.talkspurt = true;
    this.transmit(packet, latch);
    const rate = this.recording.sampleRate;
    if (rate === undefined) return;
    // `frame` is the output queue's reused buffer: the recording needs its own copy.
    this.recording.addSent(rate === 16000 ? (frame ? (wide ?? widen(frame)) : undefined) : frame?.slice());
  }



  /** Send errors (ENOBUFS, EPERM) arrive here per packet: count all, log at most every 10 s. */
  private onSocketError(error: Error): void {
    this.stats.socketErrors++;
    const now = performance.now();
    if (now - this.lastErrorLogAt < 10_000) return;
    this.lastErrorLogAt = now;
    this.logger.warn({ err: error, session: this.id, socketErrors: this.stats.socketErrors }, 'RTP socket error');
  }

  private nextSeq(): number {
    const seq = this.seq;
    this.seq = (this.seq + 1) & 0xffff;
    return seq;
  }

  private transmit(packet: Buffer, latch: SymmetricRtpLatch): void {
    if (latch.address === '0.0.0.0' || latch.address === '::' || latch.port === 0) return;
    this.stats.packetsSent++;
    this.lease.socket.send(packet, latch.port, latch.address);
  }

  private checkTimeout(audio: NegotiatedAudio, now: number): void {
    if (this.timeoutReported) return;
    // The peer sends nothing by design when it put us on hold with inactive/recvonly.
    const onHold = audio.remoteHold || audio.direction === 'sendonly' || audio.direction === 'inactive';
    const limit = onHold ? this.config.timeouts.holdTimeoutMs : this.config.timeouts.rtpTimeoutMs;
    if (limit <= 0) return;
    const silentMs = now - this.lastRtpAt;
    if (silentMs >= limit) {
      this.timeoutReported = true;
      this.emit('timeout', { silentMs: Math.round(silentMs), onHold });
    }
  }
}
