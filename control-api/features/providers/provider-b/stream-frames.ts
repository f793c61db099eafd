import { z } from 'zod';
import { base64Payload, dtmfKey, frameParser } from '../stream-protocol.js';

/**
 * Provider B's bidirectional stream messages (its public "WebSocket protocol" page for the
 * Voicebot applet): JSON text frames with snake_case fields. From the provider: `connected`,
 * `start` (stream_sid, call_sid, account_sid, from, to, custom_parameters, media_format with
 * encoding `audio/x-raw`, sample_rate and bit_rate as strings), `media` (base64 16-bit
 * little-endian PCM, about 100 ms per frame), `dtmf` (digit, duration), `mark` (echo of ours),
 * `stop`. To the provider: `media` (PCM in multiples of 320 bytes, at least 100 ms), `mark`, `clear`.
 */
const str = z.string();
const num = z.union([z.string(), z.number()]).transform((v) => Number(v));

const known = {
  connected: z.object({ event: z.literal('connected') }),
  start: z.object({
    event: z.literal('start'),
    stream_sid: str.min(1),
    start: z.object({
      stream_sid: str.optional(),
      call_sid: str.min(1),
      account_sid: str.min(1),
      from: str.optional(),
      to: str.optional(),
      custom_parameters: z.record(str, str).optional(),
      media_format: z.object({ encoding: str, sample_rate: num, bit_rate: num.optional() }),
    }),
  }),
  media: z.object({ event: z.literal('media'), stream_sid: str.min(1), media: z.object({ chunk: str.optional(), timestamp: str.optional(), payload: base64Payload }) }),
  dtmf: z.object({ event: z.literal('dtmf'), stream_sid: str.min(1), dtmf: z.object({ digit: dtmfKey, duration: num.optional() }) }),
  mark: z.object({ event: z.literal('mark'), stream_sid: str.min(1), mark: z.object({ name: str }) }),
  stop: z.object({ event: z.literal('stop'), stream_sid: str.min(1) }),
} as const;

export const parseFrameB = frameParser(known, {
  connected: () => ({ kind: 'connected' }),
  start: ({ stream_sid, start }) => ({
    kind: 'start',
    streamId: stream_sid,
    callId: start.call_sid,
    accountId: start.account_sid,
    format: { encoding: start.media_format.encoding, sampleRate: start.media_format.sample_rate, bitsPerSample: start.media_format.bit_rate },
  }),
  media: (f) => ({ kind: 'media', streamId: f.stream_sid, payload: f.media.payload }),
  dtmf: (f) => ({ kind: 'dtmf', streamId: f.stream_sid, digit: f.dtmf.digit.toUpperCase(), durationMs: Number.isFinite(f.dtmf.duration) ? f.dtmf.duration : 0 }),
  mark: (f) => ({ kind: 'mark', streamId: f.stream_sid, name: f.mark.name }),
  stop: (f) => ({ kind: 'stop', streamId: f.stream_sid }),
});

export const mediaFrameB = (streamSid: string, pcm: Buffer): string => JSON.stringify({ event: 'media', stream_sid: streamSid, media: { payload: pcm.toString('base64') } });
export const markFrameB = (streamSid: string, name: string): string => JSON.stringify({ event: 'mark', stream_sid: streamSid, mark: { name } });
export const clearFrameB = (streamSid: string): string => JSON.stringify({ event: 'clear', stream_sid: streamSid });
