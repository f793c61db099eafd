import { z } from 'zod';

/**
 * Provider C's bidirectional stream (the `<Stream bidirectional="true">` element's WebSocket, as the
 * public docs describe it): from the provider `start` (callId, streamId, tracks, mediaFormat
 * nested under `start`), `media` (base64 8 kHz mu-law, 20 ms), `dtmf`, `playedStream` (a
 * checkpoint of ours reached), `clearedAudio`; the socket closes when the call ends (no `stop`).
 * To the provider: `playAudio` (payload with its contentType and sampleRate), `checkpoint`,
 * `clearAudio`.
 */
const str = z.string();
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, { error: 'media.payload is not base64' }).refine((s) => s.length % 4 === 0, { error: 'media.payload is not base64 (length)' });

const known = {
  start: z.object({
    event: z.literal('start'),
    start: z.object({ callId: str.min(1), streamId: str.min(1), accountId: str.optional(), tracks: z.array(str).optional(), mediaFormat: z.object({ encoding: str, sampleRate: z.union([z.number(), z.string()]).transform(Number) }) }),
  }),
  media: z.object({ event: z.literal('media'), streamId: str.min(1), media: z.object({ track: str.optional(), timestamp: str.optional(), chunk: z.union([str, z.number()]).optional(), payload: base64 }) }),
  dtmf: z.object({ event: z.literal('dtmf'), streamId: str.min(1), dtmf: z.object({ digit: z.string().regex(/^[0-9*#A-Da-d]$/, { error: 'dtmf.digit must be one key' }) }) }),
  playedStream: z.object({ event: z.literal('playedStream'), streamId: str.min(1), name: str }),
  clearedAudio: z.object({ event: z.literal('clearedAudio'), streamId: str.min(1) }),
} as const;

export type InboundFrameC =
  | { readonly kind: 'start'; readonly callId: string; readonly streamId: string; readonly encoding: string; readonly sampleRate: number }
  | { readonly kind: 'media'; readonly streamId: string; readonly payload: string }
  | { readonly kind: 'dtmf'; readonly streamId: string; readonly digit: string }
  | { readonly kind: 'played'; readonly streamId: string; readonly name: string }
  | { readonly kind: 'cleared'; readonly streamId: string }
  | { readonly kind: 'unknown'; readonly event: string }
  | { readonly kind: 'malformed'; readonly problem: string };

export function parseFrameC(text: string): InboundFrameC {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: 'malformed', problem: 'not JSON' };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { kind: 'malformed', problem: 'not a JSON object' };
  const event = (json as { event?: unknown }).event;
  if (typeof event !== 'string') return { kind: 'malformed', problem: 'no "event" string' };
  if (!(event in known)) return { kind: 'unknown', event: event.slice(0, 40) };
  const parsed = known[event as keyof typeof known].safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { kind: 'malformed', problem: `${event}: ${issue?.path.join('.') || 'frame'}: ${issue?.message ?? 'invalid'}` };
  }
  const f = parsed.data;
  switch (f.event) {
    case 'start':
      return { kind: 'start', callId: f.start.callId, streamId: f.start.streamId, encoding: f.start.mediaFormat.encoding, sampleRate: f.start.mediaFormat.sampleRate };
    case 'media':
      return { kind: 'media', streamId: f.streamId, payload: f.media.payload };
    case 'dtmf':
      return { kind: 'dtmf', streamId: f.streamId, digit: f.dtmf.digit.toUpperCase() };
    case 'playedStream':
      return { kind: 'played', streamId: f.streamId, name: f.name };
    case 'clearedAudio':
      return { kind: 'cleared', streamId: f.streamId };
  }
}

export const playAudioC = (payload: Buffer): string => JSON.stringify({ event: 'playAudio', media: { contentType: 'audio/x-mulaw', sampleRate: 8000, payload: payload.toString('base64') } });
export const checkpointC = (streamId: string, name: string): string => JSON.stringify({ event: 'checkpoint', streamId, name });
export const clearAudioC = (streamId: string): string => JSON.stringify({ event: 'clearAudio', streamId });
