import { isIPv4, isIPv6 } from 'node:net';
import type { MediaDescription, SessionDescription } from 'sdp-transform';
import { staticPayloadType, type CodecName } from '../codecs/audio-codec.js';
import {
  answerDirection,
  effectiveRemoteDirection,
  parseSdp,
  serializeSdp,
  SdpError,
  type Direction,
  type SdpDocument,
  type SdpFormat,
  type SdpMedia,
} from './sdp.js';

/** What this side can do; one audio stream, G.711 and G.722, and RFC 4733 events. */
export interface MediaCapabilities {
  /**
   * Address advertised in o= and c= (IPv4, or IPv6 for a session on an IPv6 socket): streams on
   * an address of its family are answerable.
   */
  readonly address: string;
  /**
   * A second family's address (IPv6 beside an IPv4 `address`), for the media service's check
   * before it picks a socket: a stream on it is answerable too (docs/media.md, IPv6).
   */
  readonly address6?: string;
  /** Codecs in local preference order. */
  readonly codecs: readonly CodecName[];
  /** Dynamic payload type for telephone-event in our offers; `false` disables RFC 4733. */
  readonly telephoneEventPayloadType: number | false;
  readonly ptime: number;
  /** Pick the codec by our order instead of the offerer's (RFC 3264 sec. 6.1 allows either). */
  readonly preferLocalCodecOrder?: boolean;
}

export const defaultCapabilities: Omit<MediaCapabilities, 'address'> = {
  // G.722 last: our own offers keep narrowband first (what every trunk takes), and an offer that
  // puts G.722 first gets it (the answer follows the offerer's order, RFC 3264 sec. 6.1).
  codecs: ['PCMU', 'PCMA', 'G722'],
  telephoneEventPayloadType: 101,
  ptime: 20,
};

export interface SdpOrigin {
  readonly sessionId: string;
  readonly sessionVersion: number;
}

/** The audio stream both sides agreed on, from this side's point of view. */
export interface NegotiatedAudio {
  readonly mediaIndex: number;
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly codec: CodecName;
  /** Payload type of the codec on the wire (static 0/8/9 unless the peer remapped it). */
  readonly payloadType: number;
  readonly telephoneEventPayloadType: number | undefined;
  readonly ptime: number;
  /** What this side does: sends when sendrecv/sendonly, receives when sendrecv/recvonly. */
  readonly direction: Direction;
  /** Peer put the call on hold (sendonly/inactive or c=0.0.0.0). */
  readonly remoteHold: boolean;
}

export type NegotiationFailure = 'no_common_codec' | 'no_audio_stream' | 'malformed';

export type NegotiationResult =
  | { readonly ok: true; readonly sdp: string; readonly audio: NegotiatedAudio }
  | {
      readonly ok: false;
      readonly reason: NegotiationFailure;
      readonly message: string;
      /** RFC 3261 sec. 21.4.26: 488 Not Acceptable Here for SDP we cannot accept. */
      readonly sipStatus: 488 | 400;
    };

const isTelephoneEvent = (f: SdpFormat): boolean => f.encoding === 'TELEPHONE-EVENT' && f.clockRate === 8000;
// RFC 3551 sec. 4.5.2: G.722's RTP clock rate is 8000 although it samples at 16 kHz.
const isCodec = (f: SdpFormat, name: CodecName): boolean => f.encoding === name && f.clockRate === 8000 && f.channels === 1;
const isPlainRtp = (m: SdpMedia): boolean => m.protocol.toUpperCase() === 'RTP/AVP';
/**
 * Our address in the family of the stream's c= address, when we have one (RFC 8866 sec. 5.7: IP4
 * or IP6). An FQDN in c= (allowed, never seen from carriers) would cost a DNS lookup per packet,
 * so only IP literals are usable.
 */
function localAddressFor(remote: string | undefined, local: MediaCapabilities): string | undefined {
  if (remote === undefined) return undefined;
  if (isIPv4(remote)) return isIPv4(local.address) ? local.address : undefined;
  if (isIPv6(remote)) return local.address6 ?? (isIPv6(local.address) ? local.address : undefined);
  return undefined;
}
const reachable = (m: SdpMedia, local: MediaCapabilities): m is SdpMedia & { address: string } => localAddressFor(m.address, local) !== undefined;
const families = (local: MediaCapabilities): string => (local.address6 || isIPv6(local.address) ? (isIPv4(local.address) ? 'IPv4 or IPv6' : 'IPv6') : 'IPv4');

const telephoneEventOf = (m: SdpMedia, local: MediaCapabilities): SdpFormat | undefined =>
  local.telephoneEventPayloadType === false ? undefined : m.formats.find(isTelephoneEvent);

/** The audio both sides agreed on: the peer's address, the codec, RFC 4733 events, and our direction given theirs and `ours`. */
function negotiatedAudio(m: SdpMedia & { readonly address: string }, mediaIndex: number, codec: { law: CodecName; format: SdpFormat }, local: MediaCapabilities, ours: Direction): NegotiatedAudio {
  const remoteDirection = effectiveRemoteDirection(m);
  return {
    mediaIndex,
    remoteAddress: m.address,
    remotePort: m.port,
    codec: codec.law,
    payloadType: codec.format.payloadType,
    telephoneEventPayloadType: telephoneEventOf(m, local)?.payloadType,
    ptime: local.ptime,
    direction: answerDirection(remoteDirection, ours),
    remoteHold: remoteDirection === 'sendonly' || remoteDirection === 'inactive',
  };
}

function pickCodec(offered: readonly SdpFormat[], local: MediaCapabilities): { law: CodecName; format: SdpFormat } | undefined {
  if (local.preferLocalCodecOrder) {
    for (const law of local.codecs) {
      const format = offered.find((f) => isCodec(f, law));
      if (format) return { law, format };
    }
    return undefined;
  }
  for (const format of offered) {
    const law = local.codecs.find((l) => isCodec(format, l));
    if (law) return { law, format };
  }
  return undefined;
}

function failure(reason: NegotiationFailure, message: string): NegotiationResult {
  return { ok: false, reason, message, sipStatus: reason === 'malformed' ? 400 : 488 };
}

function sessionShell(address: string, origin: SdpOrigin, media: MediaDescription[]): SessionDescription {
  // RFC 8866 sec. 5.2, 5.7: IN IP4 or IN IP6 with the address of the socket the media uses.
  const ipVer = isIPv6(address) ? 6 : 4;
  return {
    version: 0,
    origin: {
      username: '-',
      sessionId: origin.sessionId,
      sessionVersion: origin.sessionVersion,
      netType: 'IN',
      ipVer,
      address,
    },
    name: '-',
    connection: { version: ipVer, ip: address },
    timing: { start: 0, stop: 0 },
    media,
  };
}

function audioDescription(
  port: number,
  codec: { law: CodecName; payloadType: number },
  telephoneEvent: { payloadType: number; events: string } | undefined,
  ptime: number,
  direction: Direction,
): MediaDescription {
  const rtp: MediaDescription['rtp'] = [{ payload: codec.payloadType, codec: codec.law, rate: 8000 }];
  const fmtp: MediaDescription['fmtp'] = [];
  if (telephoneEvent) {
    rtp.push({ payload: telephoneEvent.payloadType, codec: 'telephone-event', rate: 8000 });
    fmtp.push({ payload: telephoneEvent.payloadType, config: telephoneEvent.events });
  }
  return {
    type: 'audio',
    port,
    protocol: 'RTP/AVP',
    payloads: rtp.map((r) => r.payload).join(' '),
    rtp,
    fmtp,
    ptime,
    direction,
  } as MediaDescription;
}

/**
 * RFC 3264 sec. 6: answer an offer. The first plain-RTP audio stream with a common G.711 codec is
 * accepted with exactly one codec (plus telephone-event if offered); every other m= line is
 * rejected with port 0, keeping the m= line count and order of the offer.
 */
export function negotiate(
  offer: string | SdpDocument,
  local: MediaCapabilities,
  localPort: number,
  origin: SdpOrigin,
  localDirection: Direction = 'sendrecv',
): NegotiationResult {
  let doc: SdpDocument;
  try {
    doc = typeof offer === 'string' ? parseSdp(offer) : offer;
  } catch (error) {
    return failure('malformed', error instanceof SdpError ? error.message : 'invalid SDP');
  }
  let accepted: NegotiatedAudio | undefined;
  let answerAddress = local.address;
  let sawAudio = false;
  const media = doc.media.map((m): MediaDescription => {
    const rejected = { type: m.type, port: 0, protocol: m.protocol, payloads: m.formatList, rtp: [], fmtp: [] };
    if (accepted || m.type !== 'audio' || m.port === 0 || !isPlainRtp(m) || !reachable(m, local)) return rejected;
    sawAudio = true;
    const codec = pickCodec(m.formats, local);
    if (!codec) return rejected;
    answerAddress = localAddressFor(m.address, local) ?? local.address;
    accepted = negotiatedAudio(m, m.index, codec, local, localDirection);
    const { direction } = accepted;
    const te = telephoneEventOf(m, local);
    // RFC 4733 sec. 7.1.1: answer with the events we can receive; we handle 0-16 (DTMF + flash).
    const events = te?.fmtp?.trim() === '0-15' ? '0-15' : '0-16';
    return audioDescription(
      localPort,
      { law: codec.law, payloadType: codec.format.payloadType },
      te ? { payloadType: te.payloadType, events } : undefined,
      local.ptime,
      direction,
    );
  });
  if (!accepted) {
    return sawAudio
      ? failure('no_common_codec', `no common audio codec (we accept ${local.codecs.join(', ')} over RTP/AVP)`)
      : failure('no_audio_stream', `offer has no usable RTP/AVP audio stream on an ${families(local)} address`);
  }
  return { ok: true, sdp: serializeSdp(sessionShell(answerAddress, origin, media)), audio: accepted };
}

/** An offer for an outbound call: one audio stream, our codecs in preference order. */
export function createOffer(local: MediaCapabilities, localPort: number, origin: SdpOrigin, direction: Direction = 'sendrecv'): string {
  const rtp: MediaDescription['rtp'] = local.codecs.map((law) => ({ payload: staticPayloadType[law], codec: law, rate: 8000 }));
  const fmtp: MediaDescription['fmtp'] = [];
  if (local.telephoneEventPayloadType !== false) {
    rtp.push({ payload: local.telephoneEventPayloadType, codec: 'telephone-event', rate: 8000 });
    fmtp.push({ payload: local.telephoneEventPayloadType, config: '0-16' });
  }
  const m = {
    type: 'audio',
    port: localPort,
    protocol: 'RTP/AVP',
    payloads: rtp.map((r) => r.payload).join(' '),
    rtp,
    fmtp,
    ptime: local.ptime,
    direction,
  } as MediaDescription;
  return serializeSdp(sessionShell(local.address, origin, [m]));
}

/** RFC 3264 sec. 7/8: read the answer to our own offer (the audio stream at `mediaIndex`). */
export function acceptAnswer(
  answer: string,
  local: MediaCapabilities,
  offeredDirection: Direction = 'sendrecv',
  mediaIndex = 0,
): NegotiationResult {
  let doc: SdpDocument;
  try {
    doc = parseSdp(answer);
  } catch (error) {
    return failure('malformed', error instanceof SdpError ? error.message : 'invalid SDP');
  }
  const m = doc.media[mediaIndex];
  if (!m || m.type !== 'audio') return failure('no_audio_stream', `answer has no audio stream at m= line ${mediaIndex + 1}`);
  if (m.port === 0) return failure('no_common_codec', 'answerer rejected the audio stream (port 0)');
  if (!reachable(m, local)) return failure('no_audio_stream', `answer audio stream has no ${families(local)} connection address`);
  const codec = pickCodec(m.formats, { ...local, preferLocalCodecOrder: false });
  if (!codec) return failure('no_common_codec', 'answer selected no codec we offered');
  return { ok: true, sdp: answer, audio: negotiatedAudio(m, mediaIndex, codec, local, offeredDirection) };
}

/**
 * RFC 3264 sec. 8: a new offer in an existing session, e.g. hold (sec. 8.4: sendonly, or inactive
 * when the peer holds us too) and resume. Starts from our current SDP so the m= lines keep their
 * number and order; the audio stream offers the negotiated codec (and telephone-event) only.
 */
export function createReoffer(
  current: string,
  audio: NegotiatedAudio,
  local: MediaCapabilities,
  localPort: number,
  origin: SdpOrigin,
  direction: Direction,
): string {
  const previous = parseSdp(current);
  const media = previous.media.map((m): MediaDescription => {
    if (m.index !== audio.mediaIndex) return { type: m.type, port: 0, protocol: m.protocol, payloads: m.formatList, rtp: [], fmtp: [] };
    const te = audio.telephoneEventPayloadType;
    return audioDescription(
      localPort,
      { law: audio.codec, payloadType: audio.payloadType },
      te === undefined ? undefined : { payloadType: te, events: '0-16' },
      local.ptime,
      direction,
    );
  });
  return serializeSdp(sessionShell(local.address, origin, media));
}
