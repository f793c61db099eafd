import { isIPv6 } from 'node:net';
import { silentLogger, type Logger } from '../core/logger.js';
import { counter, gauge } from '../core/metrics.js';
import type { MediaAnswer, MediaPort, MediaSessionOptions, MediaTimeouts } from '../core/ports/media.js';
import type { CodecName } from './codecs/audio-codec.js';
import { sessionClosed, trackSession } from './media-metrics.js';
import { MediaSession } from './media-session.js';
import { PacingScheduler } from './rtp/pacing-scheduler.js';
import { RtpPortPool, RtpPortsExhaustedError } from './rtp/port-pool.js';
import type { LatchOptions } from './rtp/symmetric-latch.js';
import { defaultCapabilities, negotiate, type MediaCapabilities } from './sdp/offer-answer.js';

export interface MediaServiceOptions {
  /** Address the RTP sockets bind to. */
  readonly bindAddress: string;
  /** Address advertised in SDP (o=, c=); defaults to bindAddress. */
  readonly advertisedAddress?: string;
  /**
   * IPv6 media beside IPv4 (docs/media.md, IPv6): a second pool of RTP sockets bound here (same
   * port range), used for offers whose audio stream is on an IPv6 address. Unset: such offers
   * are refused (488).
   */
  readonly bindAddress6?: string;
  /** The IPv6 address advertised for those sessions; defaults to bindAddress6. */
  readonly advertisedAddress6?: string;
  readonly portMin: number;
  readonly portMax: number;
  readonly codecs?: readonly CodecName[];
  readonly telephoneEventPayloadType?: number | false;
  readonly preferLocalCodecOrder?: boolean;
  /** Jitter buffer depth in 20 ms packets. */
  readonly jitterDepth?: number;
  readonly timeouts?: Partial<MediaTimeouts>;
  readonly sendSilenceWhenIdle?: boolean;
  readonly latch?: LatchOptions;
  readonly receiveBufferBytes?: number;
  readonly scheduler?: PacingScheduler;
  readonly logger?: Logger;
}

const openSessionsGauge = gauge('media_sessions_open', 'RTP media sessions currently open in this process');
const answersCounter = counter('media_offers_answered_total', 'SDP offers answered, by outcome', ['outcome']);
const exhaustedCounter = counter('media_rtp_ports_exhausted_total', 'Sessions refused because no RTP port was free');

export const defaultTimeouts: MediaTimeouts = { rtpTimeoutMs: 30_000, holdTimeoutMs: 0 };

/** Implements the media port: owns the port pool and the shared pacing clock. */
export class MediaService implements MediaPort {
  readonly pool: RtpPortPool;
  readonly pool6: RtpPortPool | undefined;
  readonly scheduler: PacingScheduler;
  /** IPv4 sessions' capabilities (and our offers); IPv6 sessions'; both, for checking an offer. */
  private readonly capabilities: MediaCapabilities;
  private readonly capabilities6: MediaCapabilities | undefined;
  private readonly anyFamily: MediaCapabilities;
  private readonly sessions = new Set<MediaSession>();
  private readonly logger: Logger;

  constructor(private readonly options: MediaServiceOptions) {
    this.logger = options.logger ?? silentLogger;
    this.pool = new RtpPortPool({
      host: options.bindAddress,
      minPort: options.portMin,
      maxPort: options.portMax,
      receiveBufferBytes: options.receiveBufferBytes,
    });
    this.scheduler =
      options.scheduler ?? new PacingScheduler({ onError: (err) => this.logger.error({ err }, 'media tick failed') });
    const address = options.advertisedAddress ?? options.bindAddress;
    this.capabilities = {
      address: address === '0.0.0.0' ? '127.0.0.1' : address,
      codecs: options.codecs ?? defaultCapabilities.codecs,
      telephoneEventPayloadType: options.telephoneEventPayloadType ?? defaultCapabilities.telephoneEventPayloadType,
      ptime: defaultCapabilities.ptime,
      preferLocalCodecOrder: options.preferLocalCodecOrder ?? false,
    };
    const address6 = options.advertisedAddress6 ?? options.bindAddress6;
    if (options.bindAddress6 !== undefined && address6 !== undefined) {
      if (!isIPv6(options.bindAddress6) || !isIPv6(address6) || address6 === '::') {
        throw new Error(`IPv6 media needs an IPv6 bind address and an advertised IPv6 address other than ::, got ${options.bindAddress6} / ${address6}`);
      }
      this.pool6 = new RtpPortPool({ host: options.bindAddress6, minPort: options.portMin, maxPort: options.portMax, receiveBufferBytes: options.receiveBufferBytes });
      this.capabilities6 = { ...this.capabilities, address: address6 };
    } else {
      this.pool6 = undefined;
      this.capabilities6 = undefined;
    }
    this.anyFamily = this.capabilities6 ? { ...this.capabilities, address6: this.capabilities6.address } : this.capabilities;
  }

  get openSessions(): number {
    return this.sessions.size;
  }

  async answer(offerSdp: string, options: MediaSessionOptions = {}): Promise<MediaAnswer> {
    // Check the offer before taking a port, so a 488 costs no socket.
    const precheck = negotiate(offerSdp, this.anyFamily, 9, { sessionId: '0', sessionVersion: 0 });
    if (!precheck.ok) {
      answersCounter.inc({ outcome: precheck.reason });
      return precheck;
    }
    // The stream chosen decides the socket's family: an IPv6 stream gets an IPv6 socket.
    const session = await this.createSession(options, isIPv6(precheck.audio.remoteAddress) ? 6 : 4);
    const result = session.answerOffer(offerSdp);
    if (!result.ok) {
      await session.close();
      return result;
    }
    answersCounter.inc({ outcome: 'accepted' });
    return { ok: true, session, sdp: result.sdp };
  }

  async offer(options: MediaSessionOptions = {}): Promise<MediaSession> {
    const session = await this.createSession(options, 4);
    session.makeOffer();
    return session;
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions].map((s) => s.close()));
  }

  private async createSession(options: MediaSessionOptions, family: 4 | 6): Promise<MediaSession> {
    const v6 = family === 6 && this.pool6 && this.capabilities6 ? { pool: this.pool6, capabilities: this.capabilities6 } : undefined;
    let lease;
    try {
      lease = await (v6?.pool ?? this.pool).allocate();
    } catch (error) {
      if (error instanceof RtpPortsExhaustedError) exhaustedCounter.inc();
      throw error;
    }
    const session = new MediaSession(
      lease,
      this.scheduler,
      {
        capabilities: v6?.capabilities ?? this.capabilities,
        jitterDepth: this.options.jitterDepth ?? 3,
        timeouts: { ...defaultTimeouts, ...this.options.timeouts },
        sendSilenceWhenIdle: this.options.sendSilenceWhenIdle ?? true,
        latch: this.options.latch,
      },
      this.logger.child({ callId: options.callId, ...(options.sipCallId ? { sipCallId: options.sipCallId } : {}), rtpPort: lease.port }),
    );
    this.sessions.add(session);
    trackSession(session);
    openSessionsGauge.inc();
    session.once('closed', () => {
      this.sessions.delete(session);
      sessionClosed(session);
      openSessionsGauge.dec();
    });
    return session;
  }
}
