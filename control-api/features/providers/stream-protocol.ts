import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { pcmu } from '../../../media/codecs/g711.js';
import type { ProviderCallEntry } from './provider-calls.js';
import type { CloudProviderType } from './provider-numbers.js';

/**
 * What a cloud provider's media stream says, in one vocabulary: each provider's frame parser
 * (provider-x/stream-frames.ts) maps its JSON onto these, and one endpoint (stream-endpoint.ts)
 * runs every stream. Field names differ per provider (streamSid, stream_sid, streamId); the
 * meaning does not.
 */
export type StreamFrame =
  | { readonly kind: 'connected' }
  | { readonly kind: 'start'; readonly streamId: string; readonly callId: string; readonly accountId?: string | undefined; readonly format: StreamFormat }
  | { readonly kind: 'media'; readonly streamId: string; readonly payload: string }
  | { readonly kind: 'dtmf'; readonly streamId: string; readonly digit: string; readonly durationMs?: number | undefined }
  /** A mark of ours echoed back: the agent audio before it has played. */
  | { readonly kind: 'mark'; readonly streamId: string; readonly name: string }
  | { readonly kind: 'stop'; readonly streamId: string }
  /** The provider confirms a clear; nothing to do. */
  | { readonly kind: 'cleared'; readonly streamId: string }
  /** An event this protocol version does not define: ignored (providers add events). */
  | { readonly kind: 'unknown'; readonly event: string }
  | { readonly kind: 'malformed'; readonly problem: string };

/** The audio format a `start` frame announces. */
export interface StreamFormat {
  readonly encoding: string;
  readonly sampleRate: number;
  readonly channels?: number | undefined;
  readonly bitsPerSample?: number | undefined;
}

/** An 8 kHz mono audio encoding a provider streams in, with its name in the provider's frames. */
export interface StreamCodec {
  readonly encoding: string;
  /** Bits per sample when a `start` may state it (linear PCM). */
  readonly bitsPerSample?: number;
  /** Caller audio to 16-bit samples, or why the bytes cannot be this encoding. */
  decode(bytes: Buffer): Int16Array | string;
  /** Agent audio (20 ms frames) as the bytes of one media frame. */
  encode(frames: readonly Int16Array[]): Buffer;
}

/** The codec table: the two encodings providers A, B and C stream. */
export const streamCodecs = {
  mulaw: {
    encoding: 'audio/x-mulaw',
    decode: (bytes) => pcmu.decode(bytes),
    encode: (frames) => {
      const out = Buffer.allocUnsafe(frames.reduce((n, f) => n + f.length, 0));
      let at = 0;
      for (const f of frames) at += pcmu.encode(f, out, at);
      return out;
    },
  },
  linear16: {
    encoding: 'audio/x-raw',
    bitsPerSample: 16,
    decode: (bytes) => {
      if (bytes.length % 2 !== 0) return '16-bit PCM with an odd number of bytes';
      const out = new Int16Array(bytes.length / 2);
      for (let i = 0; i < out.length; i++) out[i] = bytes.readInt16LE(i * 2);
      return out;
    },
    encode: (frames) => {
      const out = Buffer.allocUnsafe(frames.reduce((n, f) => n + f.length * 2, 0));
      let at = 0;
      for (const f of frames) for (const s of f) at = out.writeInt16LE(s, at);
      return out;
    },
  },
} as const satisfies Record<string, StreamCodec>;

/** The frames we send a provider: agent audio, a mark, a clear. */
export interface OutboundFrames {
  media(streamId: string, payload: Buffer): string;
  mark(streamId: string, name: string): string;
  clear(streamId: string): string;
}

/** The provider's own check of a stream handshake for one of its calls (a signature, Basic auth). */
export type HandshakeVerdict =
  /** The stream may open; `accountId` is the account its `start` must name (when the provider names one). */
  | { readonly ok: true; readonly accountId?: string }
  /** Refused 403, with the reason (answered and logged). */
  | { readonly ok: false; readonly reason: string };

/** One provider's media stream: how a handshake is judged, frames read and written, audio coded. */
export interface StreamProtocol {
  readonly provider: CloudProviderType;
  readonly maxPayload: number;
  readonly codec: StreamCodec;
  /** 20 ms frames per agent media frame (B wants at least 100 ms a frame). */
  readonly framesPerChunk: number;
  /** The socket closing is the end of the call (C has no `stop` frame); otherwise a close without `stop` is a lost stream. */
  readonly closeIsStop: boolean;
  /** The stream id field's name in this provider's frames, for error messages. */
  readonly streamIdField: string;
  /** Called for a live call of this provider only (the endpoint answers 404 otherwise). */
  admit(entry: ProviderCallEntry, req: IncomingMessage): HandshakeVerdict;
  parse(text: string): StreamFrame;
  readonly outbound: OutboundFrames;
}

/** The start format's problem for this codec at 8 kHz mono, or undefined when it fits. */
export function formatProblem(format: StreamFormat, codec: StreamCodec): string | undefined {
  const fits =
    format.encoding === codec.encoding &&
    format.sampleRate === 8000 &&
    (format.channels === undefined || format.channels === 1) &&
    (format.bitsPerSample === undefined || format.bitsPerSample === codec.bitsPerSample);
  if (fits) return undefined;
  const said = [format.encoding, `${format.sampleRate} Hz`, format.channels !== undefined ? `x${format.channels}` : '', format.bitsPerSample !== undefined ? `${format.bitsPerSample}-bit` : ''].filter(Boolean).join(' ');
  return `start: media format ${said} (8000 Hz mono ${codec.bitsPerSample ? `${codec.bitsPerSample}-bit ` : ''}${codec.encoding} expected)`;
}

/** Base64 as the providers send media payloads. */
export const base64Payload = z
  .string()
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, { error: 'media.payload is not base64' })
  .refine((s) => s.length % 4 === 0, { error: 'media.payload is not base64 (length)' });

/** One telephone key as a `dtmf` frame names it. */
export const dtmfKey = z.string().regex(/^[0-9*#A-Da-d]$/, { error: 'dtmf.digit must be one key: 0-9, *, #, A-D' });

type KnownFrames = Record<string, z.ZodType<{ event: string }>>;

/**
 * A provider's frame parser from its table: each event's schema, and how a valid frame of it reads
 * in the shared vocabulary. Events outside the table are `unknown`, invalid ones `malformed`.
 */
export function frameParser<K extends KnownFrames>(known: K, meaning: { readonly [E in keyof K]: (frame: z.infer<K[E]>) => StreamFrame }): (text: string) => StreamFrame {
  return (text) => {
    const read = parseKnownFrame(text, known);
    if (read.kind !== 'parsed') return read;
    const event: keyof K = read.frame.event;
    return meaning[event](read.frame);
  };
}

/**
 * The common first steps of reading a frame: JSON, an object with an `event` string, an event the
 * protocol defines, and that event's schema. Returns the parsed frame for the provider to map, or
 * the `unknown` / `malformed` frame.
 */
export function parseKnownFrame<K extends KnownFrames>(
  text: string,
  known: K,
): { readonly kind: 'parsed'; readonly frame: z.infer<K[keyof K]> } | Extract<StreamFrame, { kind: 'unknown' | 'malformed' }> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: 'malformed', problem: `not JSON: ${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text)}` };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { kind: 'malformed', problem: 'not a JSON object' };
  const event: unknown = Reflect.get(json, 'event');
  if (typeof event !== 'string') return { kind: 'malformed', problem: 'no "event" string' };
  const schema = Object.hasOwn(known, event) ? known[event] : undefined;
  if (!schema) return { kind: 'unknown', event: event.slice(0, 40) };
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { kind: 'malformed', problem: `${event}: ${issue?.path.join('.') || 'frame'}: ${issue?.message ?? 'invalid'}` };
  }
  return { kind: 'parsed', frame: parsed.data as z.infer<K[keyof K]> };
}
