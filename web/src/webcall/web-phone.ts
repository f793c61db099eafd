import { Inviter, SessionState, UserAgent, type Session } from 'sip.js';
import type { SessionDescriptionHandler } from 'sip.js/lib/platform/web';

export type PhoneState = 'idle' | 'connecting' | 'ringing' | 'in-call' | 'ended' | 'failed';

export interface WebCallTicket {
  readonly token: string;
  readonly sipUri: string;
  readonly websocketUrl: string;
}

export interface PhoneEvents {
  onState(state: PhoneState, detail?: string): void;
  /** The agent's audio, to play through the speaker. */
  onRemoteStream(stream: MediaStream): void;
}

/**
 * The SIP WebSocket could not be opened: with the gateway's generated (self-signed) certificate
 * the browser refuses the TLS handshake and says only "closed (code: 1006)"; the page then offers
 * the certificate page (`certificatePage`) to accept it on.
 */
export class WebSocketUnreachable extends Error {
  constructor(
    readonly websocketUrl: string,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
  /** `https://host:port/` of the WSS server, where the browser shows its certificate warning. */
  get certificatePage(): string | undefined {
    try {
      const url = new URL(this.websocketUrl);
      if (url.protocol !== 'wss:') return undefined;
      return `https://${url.host}/`;
    } catch {
      return undefined;
    }
  }
}

/**
 * One web call with sip.js: a user agent on the gateway's SIP WebSocket (RFC 7118), an INVITE to the
 * ticket's target carrying the call token (X-Call-Token), the microphone as the only track, and the
 * agent's audio handed back for an <audio> element. The browser does ICE and DTLS-SRTP itself;
 * the gateway's relay (rtpengine) turns them into RTP for the agent.
 */
export class WebPhone {
  private ua: UserAgent | undefined;
  private session: Session | undefined;
  /** The SIP Call-ID of the INVITE, which the call record keeps (`sipCallId`). */
  sipCallId: string | undefined;

  constructor(private readonly events: PhoneEvents) {}

  async call(ticket: WebCallTicket): Promise<void> {
    const target = UserAgent.makeURI(ticket.sipUri);
    if (!target) throw new Error(`not a SIP URI: ${ticket.sipUri}`);
    this.events.onState('connecting');
    const ua = new UserAgent({
      // Who the call is from: the call record's other party reads `web-caller`.
      uri: UserAgent.makeURI('sip:web-caller@web.invalid'),
      transportOptions: { server: ticket.websocketUrl, connectionTimeout: 10 },
      // No STUN/TURN: the gateway's relay is reachable directly, and ICE needs host candidates only.
      sessionDescriptionHandlerFactoryOptions: { peerConnectionConfiguration: { iceServers: [] }, iceGatheringTimeout: 2000 },
      displayName: 'Web caller',
      logLevel: 'warn',
    });
    this.ua = ua;
    try {
      await ua.start();
    } catch (error) {
      throw new WebSocketUnreachable(ticket.websocketUrl, error);
    }
    const inviter = new Inviter(ua, target, {
      extraHeaders: [`X-Call-Token: ${ticket.token}`],
      sessionDescriptionHandlerOptions: { constraints: { audio: true, video: false } },
    });
    this.session = inviter;
    this.sipCallId = inviter.request.callId;
    inviter.stateChange.addListener((state) => {
      if (state === SessionState.Established) {
        const sdh = inviter.sessionDescriptionHandler as SessionDescriptionHandler | undefined;
        if (sdh) this.events.onRemoteStream(sdh.remoteMediaStream);
        this.events.onState('in-call');
      } else if (state === SessionState.Terminated) {
        this.events.onState('ended');
        void this.ua?.stop();
      }
    });
    await inviter.invite({
      requestDelegate: {
        onProgress: () => this.events.onState('ringing'),
        onReject: (response) => this.events.onState('failed', `${response.message.statusCode} ${response.message.reasonPhrase}`),
      },
    });
  }

  /** Hangs up (CANCEL before the answer, BYE after). */
  async hangUp(): Promise<void> {
    const session = this.session;
    if (!session) return;
    if (session.state === SessionState.Established) await session.bye();
    else if (session instanceof Inviter && (session.state === SessionState.Initial || session.state === SessionState.Establishing)) await session.cancel();
  }
}
