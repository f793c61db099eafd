import { z } from 'zod';

/**
 * Provider A's media stream messages (public "Media Streams - WebSocket Messages" reference):
 * JSON text frames. From the provider: `connected`, then `start` (stream and call ids, custom
 * parameters, media format), `media` (base64 8 kHz mu-law, 20 ms per frame in practice), `dtmf`,
 * `mark` (echo of ours once the audio before it played, or dropped by a clear), `stop`. To the
 * provider: `media`, `mark`, `clear`. Sequence numbers and chunk counters are strings.
 */

const str = z.string();
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, { error: 'media.payload is not base64' }).refine((s) => s.length % 4 === 0, { error: 'media.payload is not base64 (length)' });

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
  media: z.object({ track: str.optional(), chunk: str.optional(), timestamp: str.optional(), payload: base64 }),
});
const dtmf = z.object({
  event: z.literal('dtmf'),
  streamSid: str.min(1),
  sequenceNumber: str.optional(),
  dtmf: z.object({ track: str.optional(), digit: z.string().regex(/^[0-9*#A-Da-d]$/, { error: 'dtmf.digit must be one key: 0-9, *, #, A-D' }) }),
});
const mark = z.object({ event: z.literal('mark'), streamSid: str.min(1), sequenceNumber: str.optional(), mark: z.object({ name: str }) });
const stop = z.object({
  event: z.literal('stop'),
  streamSid: str.min(1),
  sequenceNumber: str.optional(),
  stop: z.object({ accountSid: str.optional(), callSid: str.optional() }).optional(),
});

const known = { connected, start, media, dtmf, mark, stop } as const;
type Known = { [K in keyof typeof known]: z.infer<(typeof known)[K]> };

export type InboundFrameA =
  | { readonly kind: 'connected' }
  | { readonly kind: 'start'; readonly frame: Known['start'] }
  | { readonly kind: 'media'; readonly streamSid: string; readonly payload: string }
  | { readonly kind: 'dtmf'; readonly streamSid: string; readonly digit: string }
  | { readonly kind: 'mark'; readonly streamSid: string; readonly name: string }
  | { readonly kind: 'stop'; readonly streamSid: string }
  /** An event this protocol version does not define: ignored (the provider may add events). */
  | { readonly kind: 'unknown'; readonly event: string }
  | { readonly kind: 'malformed'; readonly problem: string };

/** Parses one text frame; a frame the protocol does not allow comes back `malformed` with the reason. */
export function parseFrameA(text: string): InboundFrameA {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: 'malformed', problem: `not JSON: ${preview(text)}` };
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
    case 'connected':
      return { kind: 'connected' };
    case 'start':
      return { kind: 'start', frame: f };
    case 'media':
      return { kind: 'media', streamSid: f.streamSid, payload: f.media.payload };
    case 'dtmf':
      return { kind: 'dtmf', streamSid: f.streamSid, digit: f.dtmf.digit.toUpperCase() };
    case 'mark':
      return { kind: 'mark', streamSid: f.streamSid, name: f.mark.name };
    case 'stop':
      return { kind: 'stop', streamSid: f.streamSid };
  }
}

export const mediaFrameA = (streamSid: string, payload: Buffer): string => JSON.stringify({ event: 'media', streamSid, media: { payload: payload.toString('base64') } });
export const markFrameA = (streamSid: string, name: string): string => JSON.stringify({ event: 'mark', streamSid, mark: { name } });
export const clearFrameA = (streamSid: string): string => JSON.stringify({ event: 'clear', streamSid });

const preview = (text: string): string => JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text);
