/**
 * The media port: how signalling (gateway/) and call logic (control-api/) use call audio without
 * importing media/. media/ implements it (`MediaService`); the composition root wires it in.
 */

/** 20 ms of 8 kHz mono 16-bit PCM: 160 samples. */
export interface AudioFrame {
  readonly samples: Int16Array;
  /** True when synthesised for a lost or missing packet (concealment), not decoded from one. */
  readonly concealed: boolean;
  /**
   * The same 20 ms at 16 kHz (320 samples) when the call's codec is wideband (G.722); `samples`
   * is then this audio low-passed and decimated to 8 kHz. A consumer that can use 16 kHz (the
   * recogniser) takes this and skips its own upsampling; every other consumer keeps `samples`.
   */
  readonly wideband?: Int16Array;
}

export type PlaybackOutcome = 'completed' | 'interrupted';

/** Outgoing audio, paced onto the wire at 20 ms per packet. */
export interface AudioSink {
  /** Queues 8 kHz PCM of any length; it is cut into 20 ms frames. */
  write(samples: Int16Array): void;
  /** Plays a stream (e.g. TTS chunks) and resolves once it has been sent or was interrupted. */
  play(source: AsyncIterable<Int16Array> | Iterable<Int16Array>, signal?: AbortSignal): Promise<PlaybackOutcome>;
  /** Drops everything queued (barge-in); running `play` calls resolve 'interrupted'. */
  clear(): void;
  readonly queuedMs: number;
}

export interface MediaDtmfEvent {
  /** 0-9, *, #, A-D. */
  readonly digit: string;
  readonly durationMs: number;
  /** False when the end packets were lost and the press was closed by a later event or timeout. */
  readonly endSeen: boolean;
}

export interface MediaSessionEvents {
  dtmf: [MediaDtmfEvent];
  /** No RTP from the peer for the configured time (policy in MediaTimeouts); fired once per silence. */
  timeout: [{ readonly silentMs: number; readonly onHold: boolean }];
  closed: [];
}

export interface MediaTimeouts {
  /** No RTP for this long while the peer should be sending; 0 disables. */
  readonly rtpTimeoutMs: number;
  /** No RTP for this long while the peer holds the call (it may legitimately send nothing); 0 disables. */
  readonly holdTimeoutMs: number;
}

export type SdpFailureReason = 'no_common_codec' | 'no_audio_stream' | 'malformed';

export type SdpResult =
  | { readonly ok: true; readonly sdp: string }
  | { readonly ok: false; readonly reason: SdpFailureReason; readonly message: string; readonly sipStatus: 488 | 400 };

/** One call's audio: an RTP port, the negotiated codec, audio in and out, DTMF. */
export interface CallMediaSession {
  readonly id: string;
  /** Our current SDP (answer for inbound, offer for outbound until the answer is applied). */
  readonly localSdp: string;
  readonly codec: string | undefined;
  /**
   * Received audio after the jitter buffer, one frame per 20 ms once audio has started. Each
   * `for await` is its own reader with its own queue (a bridge and the conversation never take
   * frames from each other) and starts with live frames. A reader that falls more than ~1 s
   * behind loses its oldest frames. Ends when the session closes.
   */
  readonly input: AsyncIterable<AudioFrame>;
  readonly output: AudioSink;
  /** RFC 3264 sec. 8: a re-offer (re-INVITE, hold/resume); returns our answer or why it is refused. */
  update(offerSdp: string): SdpResult;
  /** Our own re-offer in an existing call (re-INVITE): 'sendonly' holds (RFC 3264 sec. 8.4), 'sendrecv' resumes. */
  reoffer(direction: 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive'): string;
  /** The answer to our own offer or re-offer. */
  applyAnswer(answerSdp: string): SdpResult;
  playWav(path: string, signal?: AbortSignal): Promise<PlaybackOutcome>;
  /** Sends digits as RFC 4733 events; resolves when the last end packet is out. */
  sendDtmf(digits: string, options?: { readonly durationMs?: number }): Promise<void>;
  /** Records both directions into one stereo WAV: caller (received) left, agent (sent) right. */
  startRecording(path: string): Promise<void>;
  stopRecording(): Promise<void>;
  on<K extends keyof MediaSessionEvents>(event: K, listener: (...args: MediaSessionEvents[K]) => void): unknown;
  off<K extends keyof MediaSessionEvents>(event: K, listener: (...args: MediaSessionEvents[K]) => void): unknown;
  close(): Promise<void>;
}

export type MediaAnswer =
  | { readonly ok: true; readonly session: CallMediaSession; readonly sdp: string }
  | { readonly ok: false; readonly reason: SdpFailureReason; readonly message: string; readonly sipStatus: 488 | 400 };

export interface MediaSessionOptions {
  /** The call's id: every log line of the session carries it. */
  readonly callId?: string;
  /** The SIP Call-ID of the call's dialog, when known before the session is made (inbound calls). */
  readonly sipCallId?: string;
}

/**
 * What the gateway needs: answer an offer (488 on `no_common_codec`), make an offer, close.
 * Port exhaustion throws an AppError with code `resource_exhausted` (answer 503).
 */
export interface MediaPort {
  answer(offerSdp: string, options?: MediaSessionOptions): Promise<MediaAnswer>;
  offer(options?: MediaSessionOptions): Promise<CallMediaSession>;
  readonly openSessions: number;
}
