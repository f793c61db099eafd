import { z } from 'zod';
import { base64Payload, dtmfKey, frameParser } from '../stream-protocol.js';

/**
 * Provider A's media stream messages (public "Media Streams - WebSocket Messages" reference):
 * JSON text frames. From the provider: `connected`, then `start` (stream and call ids, custom
 * parameters, media format), `media` (base64 8 kHz mu-law, 20 ms per frame in practice), `dtmf`,
 * `mark` (echo of ours once the audio before it played, or dropped by a clear), `stop`. To the
 * provider: `media`, `mark`, `clear`. Sequence numbers and chunk counters are strings.
 */

const str = z.string();

const connected = z.object({ event: z.literal('connected'), protocol: str.optional(), version: str.optional() });
const start = z.object({
  event: z.literal('start'),
  sequenceNumber: str.optional(),
  streamSid: str.min(1),
  start: z.object({
    streamSid: str.min(1).optional(),
    accountSid: str.min(1),
    callSid: str.min(1),
    tracks: z.array(str).optional(),
    customParameters: z.record(str, str).optional(),
    mediaFormat: z.object({ encoding: str, sampleRate: z.number(), channels: z.number() }),
  }),
});
const media = z.object({
  event: z.literal('media'),
  sequenceNumber: str.optional(),
  streamSid: str.min(1),
  media: z.object({ track: str.optional(), chunk: str.optional(), timestamp: str.optional(), payload: base64Payload }),
});
const dtmf = z.object({
  event: z.literal('dtmf'),
  streamSid: str.min(1),
  sequenceNumber: str.optional(),
  dtmf: z.object({ track: str.optional(), digit: dtmfKey }),
});
const mark = z.object({ event: z.literal('mark'), streamSid: str.min(1), sequenceNumber: str.optional(), mark: z.object({ name: str }) });
const stop = z.object({
  event: z.literal('stop'),
  streamSid: str.min(1),
  sequenceNumber: str.optional(),
  stop: z.object({ accountSid: str.optional(), callSid: str.optional() }).optional(),
});

const known = { connected, start, media, dtmf, mark, stop } as const;

/** Parses one text frame; a frame the protocol does not allow comes back `malformed` with the reason. */
export const parseFrameA = frameParser(known, {
  connected: () => ({ kind: 'connected' }),
  start: (f) => ({ kind: 'start', streamId: f.streamSid, callId: f.start.callSid, accountId: f.start.accountSid, format: f.start.mediaFormat }),
  media: (f) => ({ kind: 'media', streamId: f.streamSid, payload: f.media.payload }),
  dtmf: (f) => ({ kind: 'dtmf', streamId: f.streamSid, digit: f.dtmf.digit.toUpperCase() }),
  mark: (f) => ({ kind: 'mark', streamId: f.streamSid, name: f.mark.name }),
  stop: (f) => ({ kind: 'stop', streamId: f.streamSid }),
});

export const mediaFrameA = (streamSid: string, payload: Buffer): string => JSON.stringify({ event: 'media', streamSid, media: { payload: payload.toString('base64') } });
export const markFrameA = (streamSid: string, name: string): string => JSON.stringify({ event: 'mark', streamSid, mark: { name } });
export const clearFrameA = (streamSid: string): string => JSON.stringify({ event: 'clear', streamSid });

