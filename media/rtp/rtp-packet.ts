/**
 * RTP fixed header (RFC 3550 sec. 5.1). Parsing never throws: a malformed datagram yields
 * `undefined`, because anything on the wire may be garbage and a media socket must not crash.
 */

export const RTP_VERSION = 2;
export const RTP_HEADER_BYTES = 12;

export interface RtpHeaderExtension {
  /** "defined by profile" 16-bit value (RFC 3550 sec. 5.3.1). */
  readonly profile: number;
  readonly data: Buffer;
}

export interface RtpPacket {
  readonly version: number;
  readonly padding: boolean;
  readonly marker: boolean;
  readonly payloadType: number;
  readonly sequenceNumber: number;
  readonly timestamp: number;
  readonly ssrc: number;
  readonly csrcs: readonly number[];
  readonly extension: RtpHeaderExtension | undefined;
  /** Payload without padding; a view into the datagram, not a copy. */
  readonly payload: Buffer;
}

const noCsrcs: readonly number[] = Object.freeze([]);

export function parseRtpPacket(datagram: Buffer): RtpPacket | undefined {
  if (datagram.length < RTP_HEADER_BYTES) return undefined;
  const b0 = datagram[0] ?? 0;
  const b1 = datagram[1] ?? 0;
  const version = b0 >> 6;
  if (version !== RTP_VERSION) return undefined;
  const padding = (b0 & 0x20) !== 0;
  const hasExtension = (b0 & 0x10) !== 0;
  const csrcCount = b0 & 0x0f;
  const payloadType = b1 & 0x7f;
  // RFC 5761 sec. 4: PT 72-76 with the marker bit are RTCP SR/RR/SDES/BYE/APP when multiplexed.
  if (payloadType >= 72 && payloadType <= 76) return undefined;
  let offset = RTP_HEADER_BYTES + csrcCount * 4;
  if (datagram.length < offset) return undefined;
  let csrcs = noCsrcs;
  if (csrcCount > 0) {
    const list: number[] = [];
    for (let i = 0; i < csrcCount; i++) list.push(datagram.readUInt32BE(RTP_HEADER_BYTES + i * 4));
    csrcs = list;
  }
  let extension: RtpHeaderExtension | undefined;
  if (hasExtension) {
    if (datagram.length < offset + 4) return undefined;
    const profile = datagram.readUInt16BE(offset);
    const words = datagram.readUInt16BE(offset + 2);
    const end = offset + 4 + words * 4;
    if (datagram.length < end) return undefined;
    extension = { profile, data: datagram.subarray(offset + 4, end) };
    offset = end;
  }
  let end = datagram.length;
  if (padding) {
    // RFC 3550 sec. 5.1: the last octet counts the padding octets, itself included.
    const padCount = datagram[end - 1] ?? 0;
    if (padCount === 0 || end - padCount < offset) return undefined;
    end -= padCount;
  }
  return {
    version,
    padding,
    marker: (b1 & 0x80) !== 0,
    payloadType,
    sequenceNumber: datagram.readUInt16BE(2),
    timestamp: datagram.readUInt32BE(4),
    ssrc: datagram.readUInt32BE(8),
    csrcs,
    extension,
    payload: datagram.subarray(offset, end),
  };
}

export interface RtpPacketInit {
  readonly marker?: boolean;
  readonly payloadType: number;
  readonly sequenceNumber: number;
  readonly timestamp: number;
  readonly ssrc: number;
  readonly csrcs?: readonly number[];
  readonly extension?: RtpHeaderExtension;
  /** Pads the packet to a multiple of this many octets (RFC 3550 sec. 5.1, P bit). */
  readonly padTo?: number;
  readonly payload: Uint8Array;
}

/** Writes the 12-byte fixed header (no CSRC/extension) into `out`: the hot path of the sender. */
export function writeRtpHeader(
  out: Buffer,
  payloadType: number,
  marker: boolean,
  sequenceNumber: number,
  timestamp: number,
  ssrc: number,
): void {
  out[0] = RTP_VERSION << 6;
  out[1] = (marker ? 0x80 : 0) | (payloadType & 0x7f);
  out.writeUInt16BE(sequenceNumber & 0xffff, 2);
  out.writeUInt32BE(timestamp >>> 0, 4);
  out.writeUInt32BE(ssrc >>> 0, 8);
}

export function serializeRtpPacket(init: RtpPacketInit): Buffer {
  const csrcs = init.csrcs ?? [];
  if (csrcs.length > 15) throw new RangeError('RTP allows at most 15 CSRCs');
  const extBytes = init.extension ? 4 + Math.ceil(init.extension.data.length / 4) * 4 : 0;
  const unpadded = RTP_HEADER_BYTES + csrcs.length * 4 + extBytes + init.payload.length;
  const padTo = init.padTo ?? 0;
  const padCount = padTo > 1 && unpadded % padTo !== 0 ? padTo - (unpadded % padTo) : 0;
  const out = Buffer.alloc(unpadded + padCount);
  writeRtpHeader(out, init.payloadType, init.marker ?? false, init.sequenceNumber, init.timestamp, init.ssrc);
  out[0] = (out[0] ?? 0) | (padCount ? 0x20 : 0) | (init.extension ? 0x10 : 0) | csrcs.length;
  let offset = RTP_HEADER_BYTES;
  for (const csrc of csrcs) {
    out.writeUInt32BE(csrc >>> 0, offset);
    offset += 4;
  }
  if (init.extension) {
    out.writeUInt16BE(init.extension.profile & 0xffff, offset);
    out.writeUInt16BE((extBytes - 4) / 4, offset + 2);
    out.set(init.extension.data, offset + 4);
    offset += extBytes;
  }
  out.set(init.payload, offset);
  if (padCount) out[out.length - 1] = padCount;
  return out;
}

/** Signed distance from `b` to `a` in 16-bit sequence space (RFC 3550 A.1 style). */
export function seqDelta(a: number, b: number): number {
  return ((a - b + 0x8000) & 0xffff) - 0x8000;
}
