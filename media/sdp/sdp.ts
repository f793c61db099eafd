import { parse, write, type MediaDescription, type SessionDescription } from 'sdp-transform';
import { AppError } from '../../core/errors.js';

/**
 * A typed view over an SDP body (RFC 8866). Line syntax is handled by `sdp-transform`; this file
 * resolves what offer/answer needs: effective connection address (media-level c= overrides the
 * session's, sec. 5.7), effective direction (media-level attribute overrides the session's,
 * RFC 3264 sec. 5.1, default sendrecv), and formats with static payload types filled in when the
 * peer omitted their rtpmap (RFC 3551 sec. 6, common with older carrier gear).
 */

export type Direction = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';
const directions: readonly string[] = ['sendrecv', 'sendonly', 'recvonly', 'inactive'];

export interface SdpFormat {
  readonly payloadType: number;
  /** Encoding name upper-cased (`PCMU`, `TELEPHONE-EVENT`); empty when unknown. */
  readonly encoding: string;
  readonly clockRate: number;
  readonly channels: number;
  readonly fmtp: string | undefined;
}

export interface SdpMedia {
  readonly index: number;
  readonly type: string;
  readonly port: number;
  readonly protocol: string;
  /** The m= line's format list exactly as offered (kept for rejected streams, RFC 3264 sec. 6). */
  readonly formatList: string;
  readonly formats: readonly SdpFormat[];
  readonly address: string | undefined;
  readonly direction: Direction;
  readonly ptime: number | undefined;
  readonly rtcpPort: number | undefined;
}

export interface SdpDocument {
  readonly sessionId: string;
  readonly sessionVersion: number;
  readonly originAddress: string;
  readonly media: readonly SdpMedia[];
  readonly raw: SessionDescription;
}

/** RFC 3551 table 4: static audio payload types a peer may use without an rtpmap line. */
const staticPayloadTypes: Readonly<Record<number, readonly [string, number]>> = {
  0: ['PCMU', 8000],
  3: ['GSM', 8000],
  4: ['G723', 8000],
  8: ['PCMA', 8000],
  9: ['G722', 8000],
  13: ['CN', 8000],
  18: ['G729', 8000],
};

export class SdpError extends AppError {
  constructor(message: string) {
    super('malformed', `invalid SDP: ${message}`);
    this.name = 'SdpError';
  }
}

function parseFormats(m: MediaDescription): SdpFormat[] {
  const list = String(m.payloads ?? '').trim();
  if (list === '') return [];
  const formats: SdpFormat[] = [];
  for (const token of list.split(/\s+/)) {
    const pt = Number(token);
    // Non-RTP transports (e.g. UDP/BFCP) may carry non-numeric formats: no codec to resolve.
    if (!Number.isInteger(pt) || pt < 0 || pt > 127) continue;
    const map = m.rtp.find((r) => r.payload === pt);
    const fmtp = m.fmtp.find((f) => f.payload === pt)?.config;
    const fallback = staticPayloadTypes[pt];
    formats.push({
      payloadType: pt,
      encoding: (map?.codec ?? fallback?.[0] ?? '').toUpperCase(),
      clockRate: map?.rate ?? fallback?.[1] ?? 0,
      channels: map?.encoding ?? 1,
      fmtp,
    });
  }
  return formats;
}

function directionOf(value: unknown, fallback: Direction): Direction {
  return typeof value === 'string' && directions.includes(value) ? (value as Direction) : fallback;
}

export function parseSdp(text: string): SdpDocument {
  if (typeof text !== 'string' || text.trim() === '') throw new SdpError('empty body');
  // Some gear ends lines with a bare LF or adds trailing spaces; sdp-transform splits on either.
  // sdp-transform does not read `m=<media> <port>/<count>` (sec. 5.14): keep the base port, which
  // is the RTP port of the first (for audio: only) stream.
  const raw = parse(text.replace(/[ \t]+(\r?\n)/g, '$1').replace(/^m=(\S+) (\d+)\/\d+ /gm, 'm=$1 $2 '));
  if (raw.version !== 0) throw new SdpError('missing or unsupported v= line (RFC 8866 sec. 5.1)');
  if (!raw.origin || raw.origin.address === undefined) throw new SdpError('missing o= line (RFC 8866 sec. 5.2)');
  const sessionDirection = directionOf((raw as { direction?: unknown }).direction, 'sendrecv');
  const sessionAddress = raw.connection?.ip;
  const media = (raw.media ?? []).map((m, index): SdpMedia => {
    if (!Number.isInteger(m.port) || m.port < 0 || m.port > 65535) throw new SdpError(`bad port on m= line ${index + 1}`);
    const address = m.connection?.ip ?? sessionAddress;
    return {
      index,
      type: m.type,
      port: m.port,
      protocol: m.protocol,
      formatList: String(m.payloads ?? ''),
      formats: parseFormats(m),
      address: address?.split('/')[0],
      direction: directionOf((m as { direction?: unknown }).direction, sessionDirection),
      ptime: typeof m.ptime === 'number' && m.ptime > 0 ? m.ptime : undefined,
      rtcpPort: m.rtcp?.port,
    };
  });
  for (const m of media) {
    if (m.port !== 0 && !m.address) throw new SdpError(`m= line ${m.index + 1} has no c= line at session or media level`);
  }
  return {
    sessionId: String(raw.origin.sessionId),
    sessionVersion: Number(raw.origin.sessionVersion),
    originAddress: raw.origin.address,
    media,
    raw,
  };
}

export function serializeSdp(description: SessionDescription): string {
  return write(description);
}

/** RFC 3264 sec. 6.1: the answerer's direction given the offerer's (and whether it wants to hold). */
export function answerDirection(offered: Direction, local: Direction = 'sendrecv'): Direction {
  const remoteSends = offered === 'sendrecv' || offered === 'sendonly';
  const remoteReceives = offered === 'sendrecv' || offered === 'recvonly';
  const localSends = remoteReceives && (local === 'sendrecv' || local === 'sendonly');
  const localReceives = remoteSends && (local === 'sendrecv' || local === 'recvonly');
  if (localSends && localReceives) return 'sendrecv';
  if (localSends) return 'sendonly';
  if (localReceives) return 'recvonly';
  return 'inactive';
}

/**
 * Old-style hold (RFC 3264 sec. 8.4, RFC 2543): c=0.0.0.0 means "do not send to me". We read it
 * as the peer no longer receiving, whatever direction attribute came with it.
 */
export function effectiveRemoteDirection(media: SdpMedia): Direction {
  // An IPv6 peer's equivalent is the unspecified address (RFC 3264 sec. 8.4 names only IPv4).
  if (media.address !== '0.0.0.0' && media.address !== '::') return media.direction;
  if (media.direction === 'sendrecv' || media.direction === 'sendonly') return 'sendonly';
  return 'inactive';
}
