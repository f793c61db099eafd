import { Client, type NgResponse, type NgValue } from 'rtpengine-client';
import type { Logger } from '../../core/logger.js';
import type { BridgeLeg, WebRtcBridge } from '../../core/ports/web-call.js';
import { counter } from '../../core/metrics.js';

const rtpengineCommands = counter('rtpengine_commands_total', 'ng commands to the web calls\' rtpengine, by command and result (ok, refused: rtpengine said no, error: no answer or a transport failure)', ['command', 'result']);
const countRtpengine = (command: string, result: 'ok' | 'refused' | 'error'): void => void rtpengineCommands.labels(command, result).inc();

/** The platform's call id (and SIP Call-ID, when the session is keyed on it) for log lines. */
export interface CallNames {
  readonly callId: string;
  readonly sipCallId?: string;
}

const names = (call: CallNames | undefined): Partial<CallNames> => (call ? { callId: call.callId, ...(call.sipCallId ? { sipCallId: call.sipCallId } : {}) } : {});

export interface RtpengineBridgeOptions {
  /** rtpengine's ng control socket. */
  readonly ng: { readonly host: string; readonly port: number };
  readonly logger: Logger;
  /** Per ng command; rtpengine answers in well under a millisecond on loopback. */
  readonly timeoutMs?: number;
}

/** A refused or unanswered ng command, with rtpengine's reason. */
export class RtpengineError extends Error {}

/**
 * WebRTC <-> RTP for web calls through rtpengine's ng protocol (rtpengine-client, bencode over
 * UDP). The browser's leg keeps what browsers require (RFC 8827/8834): ICE, DTLS-SRTP (RFC 5764)
 * with rtpengine passive, RTP/RTCP multiplexed (RFC 5761); the platform's leg is plain RTP/AVP with
 * ICE removed, so media/ needs nothing of WebRTC. Codecs pass through: the platform's answer picks
 * G.711 from the browser's list, so nothing is transcoded.
 */
export class RtpengineBridge implements WebRtcBridge {
  private readonly client: Client;
  private readonly ready: Promise<void>;
  /**
   * Our call id by the ng `call-id` of each session rtpengine holds (a web call's SIP Call-ID; the
   * SRTP relay's sessions use our call id itself): rtpengine's own log lines name the former.
   */
  private readonly calls = new Map<string, string>();

  constructor(private readonly o: RtpengineBridgeOptions) {
    // rtpengine-client speaks over an IPv4 socket: bind it to loopback when rtpengine runs here.
    const loopback = o.ng.host === 'localhost' || o.ng.host.startsWith('127.');
    this.client = new Client({ localAddress: loopback ? '127.0.0.1' : '0.0.0.0', timeout: o.timeoutMs ?? 3000 });
    // A late or foreign datagram is reported as an event: logged, never an uncaught error.
    this.client.on('error', (error: unknown) => o.logger.warn({ err: error }, 'rtpengine client error'));
    this.ready = new Promise((resolve) => this.client.once('listening', () => resolve()));
  }

  /** rtpengine answers `pong` (startup checks, readiness). */
  async ping(): Promise<boolean> {
    await this.ready;
    const r = await this.client.ping(this.o.ng).catch(() => undefined);
    return r?.result === 'pong';
  }

  /** The call a line of rtpengine's log is about, when it names the session id of a live session. */
  callIn(line: string): { callId: string; sipCallId?: string } | undefined {
    for (const [session, callId] of this.calls) if (line.includes(session)) return session === callId ? { callId } : { callId, sipCallId: session };
    return undefined;
  }

  async offer(leg: BridgeLeg, webrtcSdp: string): Promise<string> {
    return this.sdpOf('offer', await this.command('offer', {
      'call-id': leg.sipCallId,
      'from-tag': leg.fromTag,
      sdp: webrtcSdp,
      // Towards the platform: plain RTP, no ICE, RTCP on its own port (RFC 3550 sec. 11).
      'transport-protocol': 'RTP/AVP',
      ICE: 'remove',
      'rtcp-mux': ['demux'],
      replace: ['origin', 'session-connection'],
      flags: ['trust-address'],
      label: 'browser',
    }, leg), leg);
  }

  async answer(leg: BridgeLeg, plainSdp: string): Promise<string> {
    return this.sdpOf('answer', await this.command('answer', {
      'call-id': leg.sipCallId,
      'from-tag': leg.fromTag,
      'to-tag': leg.toTag,
      sdp: plainSdp,
      // Towards the browser: DTLS-SRTP with rtpengine passive (the browser offered actpass), ICE, rtcp-mux.
      'transport-protocol': 'UDP/TLS/RTP/SAVPF',
      ICE: 'force',
      'rtcp-mux': ['require'],
      replace: ['origin', 'session-connection'],
      flags: ['trust-address'],
      label: 'platform',
    }, leg), leg);
  }

  async release(leg: BridgeLeg): Promise<void> {
    try {
      await this.command('delete', { 'call-id': leg.sipCallId, 'from-tag': leg.fromTag }, leg);
    } catch (error) {
      // Nothing to free (never offered, or already gone): only worth a debug line.
      this.o.logger.debug({ err: error, callId: leg.callId, sipCallId: leg.sipCallId }, 'rtpengine delete');
    }
  }

  close(): void {
    this.client.close();
  }

  /**
   * One ng command; a refusal or no answer throws RtpengineError (also used by the SRTP relay).
   * `call` names the platform's call on the log lines, and on rtpengine's own lines about the
   * session (`call-id`) until 5 s after its delete (rtpengine writes its final stats after that).
   */
  async command(verb: 'offer' | 'answer' | 'delete', options: Record<string, NgValue>, call?: CallNames): Promise<NgResponse> {
    await this.ready;
    const session = options['call-id'];
    if (call && typeof session === 'string') {
      if (verb === 'delete') setTimeout(() => this.calls.delete(session), 5_000).unref();
      else this.calls.set(session, call.callId);
    }
    if (typeof options['sdp'] === 'string') this.o.logger.debug({ ...names(call), verb, sdp: options['sdp'] }, 'SDP to rtpengine');
    let response: NgResponse;
    try {
      response = await this.client[verb](this.o.ng, options);
    } catch (error) {
      countRtpengine(verb, 'error');
      throw new RtpengineError(`rtpengine ${verb}: ${(error as Error).message ?? String(error)}`, { cause: error });
    }
    countRtpengine(verb, response.result === 'ok' ? 'ok' : 'refused');
    if (response.result !== 'ok') throw new RtpengineError(`rtpengine refused ${verb}: ${response['error-reason'] ?? response.result}`);
    return response;
  }

  sdpOf(verb: string, response: NgResponse, call?: CallNames): string {
    if (typeof response.sdp !== 'string' || response.sdp.length === 0) throw new RtpengineError(`rtpengine ${verb} returned no SDP`);
    this.o.logger.debug({ ...names(call), verb, sdp: response.sdp }, 'rtpengine rewrote the SDP');
    return response.sdp;
  }
}
