import { z } from 'zod';
import { base64Payload, dtmfKey, frameParser } from '../stream-protocol.js';

/**
 * Provider C's bidirectional stream (the `<Stream bidirectional="true">` element's WebSocket, as the
 * public docs describe it): from the provider `start` (callId, streamId, tracks, mediaFormat
 * nested under `start`), `media` (base64 8 kHz mu-law, 20 ms), `dtmf`, `playedStream` (a
 * checkpoint of ours reached), `clearedAudio`; the socket closes when the call ends (no `stop`).
 * To the provider: `playAudio` (payload with its contentType and sampleRate), `checkpoint`,
 * `clearAudio`.
 */
const str = z.string();

const known = {
  start: z.object({
    event: z.literal('start'),
    start: z.object({ callId: str.min(1), streamId: str.min(1), accountId: str.optional(), tracks: z.array(str).optional(), mediaFormat: z.object({ encoding: str, sampleRate: z.union([z.number(), z.string()]).transform(Number) }) }),
  }),
  media: z.object({ event: z.literal('media'), streamId: str.min(1), media: z.object({ track: str.optional(), timestamp: str.optional(), chunk: z.union([str, z.number()]).optional(), payload: base64Payload }) }),
  dtmf: z.object({ event: z.literal('dtmf'), streamId: str.min(1), dtmf: z.object({ digit: dtmfKey }) }),
  playedStream: z.object({ event: z.literal('playedStream'), streamId: str.min(1), name: str }),
  clearedAudio: z.object({ event: z.literal('clearedAudio'), streamId: str.min(1) }),
} as const;

export const parseFrameC = frameParser(known, {
  start: ({ start }) => ({ kind: 'start', streamId: start.streamId, callId: start.callId, format: start.mediaFormat }),
  media: (f) => ({ kind: 'media', streamId: f.streamId, payload: f.media.payload }),
  dtmf: (f) => ({ kind: 'dtmf', streamId: f.streamId, digit: f.dtmf.digit.toUpperCase() }),
  playedStream: (f) => ({ kind: 'mark', streamId: f.streamId, name: f.name }),
  clearedAudio: (f) => ({ kind: 'cleared', streamId: f.streamId }),
});

export const playAudioC = (payload: Buffer): string => JSON.stringify({ event: 'playAudio', media: { contentType: 'audio/x-mulaw', sampleRate: 8000, payload: payload.toString('base64') } });
export const checkpointC = (streamId: string, name: string): string => JSON.stringify({ event: 'checkpoint', streamId, name });
export const clearAudioC = (streamId: string): string => JSON.stringify({ event: 'clearAudio', streamId });
