/**
 * G.711 (ITU-T G.711) mu-law and A-law, table-driven.
 *
 * Encoding looks the 16-bit sample up in a 64 KiB table built once at load, decoding in a
 * 256-entry table, so a 20 ms frame is 160 array reads with no allocation when the caller
 * passes the output buffer (the RTP send/receive paths do).
 */

/** 8 kHz, 20 ms: the frame size used everywhere in media/. */
export const SAMPLE_RATE = 8000;
export const FRAME_SAMPLES = 160;
export const FRAME_MS = 20;

const MULAW_BIAS = 0x84;
const MULAW_CLIP = 32635;

function encodeMulawSample(sample: number): number {
  // G.711 sec. 3: sign-magnitude with a bias of 33 (scaled by 4 for 16-bit input), 8 segments.
  let s = sample;
  const sign = s < 0 ? 0x80 : 0;
  if (s < 0) s = -s;
  if (s > MULAW_CLIP) s = MULAW_CLIP;
  s += MULAW_BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

function decodeMulawSample(code: number): number {
  const u = ~code & 0xff;
  const exponent = (u >> 4) & 0x07;
  const mantissa = u & 0x0f;
  const magnitude = (((mantissa << 3) + MULAW_BIAS) << exponent) - MULAW_BIAS;
  return u & 0x80 ? -magnitude : magnitude;
}

function encodeAlawSample(sample: number): number {
  // G.711 A-law works on 13-bit magnitudes; even bits are inverted (XOR 0x55) on the wire.
  let s = sample;
  let sign = 0x80;
  if (s < 0) {
    sign = 0;
    s = -s - 1;
  }
  if (s > 32767) s = 32767;
  let code: number;
  if (s < 256) {
    code = s >> 4;
  } else {
    let exponent = 1;
    for (let v = s >> 8; v > 1; v >>= 1) exponent++;
    code = (exponent << 4) | ((s >> (exponent + 3)) & 0x0f);
  }
  return (code | sign) ^ 0x55;
}

function decodeAlawSample(code: number): number {
  const a = code ^ 0x55;
  const exponent = (a >> 4) & 0x07;
  const mantissa = a & 0x0f;
  let magnitude = exponent === 0 ? (mantissa << 4) + 8 : ((mantissa << 4) + 0x108) << (exponent - 1);
  if (!(a & 0x80)) magnitude = -magnitude;
  return magnitude;
}

function buildEncodeTable(encode: (sample: number) => number): Uint8Array {
  const table = new Uint8Array(65536);
  for (let i = 0; i < 65536; i++) table[i] = encode(i >= 32768 ? i - 65536 : i);
  return table;
}

function buildDecodeTable(decode: (code: number) => number): Int16Array {
  const table = new Int16Array(256);
  for (let i = 0; i < 256; i++) table[i] = decode(i);
  return table;
}

const mulawEncodeTable = buildEncodeTable(encodeMulawSample);
const alawEncodeTable = buildEncodeTable(encodeAlawSample);
const mulawDecodeTable = buildDecodeTable(decodeMulawSample);
const alawDecodeTable = buildDecodeTable(decodeAlawSample);

export type G711Law = 'PCMU' | 'PCMA';

export interface G711Codec {
  readonly name: G711Law;
  /** Static RTP payload type (RFC 3551 sec. 6). */
  readonly payloadType: number;
  /** Encodes `pcm` into `out` (one byte per sample) starting at `offset`; returns bytes written. */
  encode(pcm: Int16Array, out: Uint8Array, offset?: number): number;
  /** Decodes `payload` into `out` (must hold payload.length samples) and returns `out`. */
  decode(payload: Uint8Array, out?: Int16Array): Int16Array;
  /** The codeword of digital silence, used to fill gaps without a decode. */
  readonly silenceByte: number;
}

function makeCodec(name: G711Law, payloadType: number, enc: Uint8Array, dec: Int16Array): G711Codec {
  return {
    name,
    payloadType,
    silenceByte: enc[0] ?? 0,
    encode(pcm, out, offset = 0) {
      const n = pcm.length;
      for (let i = 0; i < n; i++) out[offset + i] = enc[(pcm[i] ?? 0) & 0xffff] ?? 0;
      return n;
    },
    decode(payload, out = new Int16Array(payload.length)) {
      const n = Math.min(payload.length, out.length);
      for (let i = 0; i < n; i++) out[i] = dec[payload[i] ?? 0] ?? 0;
      return out;
    },
  };
}

export const pcmu: G711Codec = makeCodec('PCMU', 0, mulawEncodeTable, mulawDecodeTable);
export const pcma: G711Codec = makeCodec('PCMA', 8, alawEncodeTable, alawDecodeTable);

export function codecByName(name: G711Law): G711Codec {
  return name === 'PCMU' ? pcmu : pcma;
}
