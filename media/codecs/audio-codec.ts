import { G722Decoder, G722Encoder } from './g722.js';
import { codecByName, type G711Law } from './g711.js';

/** The RTP audio codecs media/ speaks (RFC 3551 static payload types 0, 8 and 9). */
export type CodecName = G711Law | 'G722';

export const staticPayloadType: Readonly<Record<CodecName, number>> = { PCMU: 0, PCMA: 8, G722: 9 };

/**
 * One direction's codec state for a session. G.711 is stateless; G.722 is ADPCM, so each
 * direction of each call has its own encoder or decoder, created when the codec is negotiated.
 * Every codec here carries 160 octets per 20 ms and an RTP clock of 8000 (RFC 3551 sec. 4.5.2:
 * G.722's clock rate is 8000 although it samples at 16 kHz).
 */
export interface RtpAudioCodec {
  readonly name: CodecName;
  /** The audio's sample rate: 8000 (G.711) or 16000 (G.722). */
  readonly sampleRate: 8000 | 16000;
  /** Samples per 20 ms at `sampleRate`: 160 or 320. */
  readonly frameSamples: number;
  /** Samples per payload octet: 1 or 2. */
  readonly samplesPerOctet: 1 | 2;
  /** Encodes `pcm` (at `sampleRate`) into `out` from `offset`; returns the octets written. */
  encode(pcm: Int16Array, out: Uint8Array, offset?: number): number;
  /** Decodes `payload` into `out` (payload.length x samplesPerOctet samples) and returns `out`. */
  decode(payload: Uint8Array, out: Int16Array): Int16Array;
}

/** A fresh codec instance (new ADPCM state for G.722). */
export function createCodec(name: CodecName): RtpAudioCodec {
  if (name !== 'G722') {
    const g711 = codecByName(name);
    return { name, sampleRate: 8000, frameSamples: 160, samplesPerOctet: 1, encode: g711.encode, decode: g711.decode };
  }
  const encoder = new G722Encoder();
  const decoder = new G722Decoder();
  return {
    name,
    sampleRate: 16000,
    frameSamples: 320,
    samplesPerOctet: 2,
    encode: (pcm, out, offset = 0) => encoder.encode(pcm, out, offset),
    decode: (payload, out) => decoder.decode(payload, out),
  };
}
