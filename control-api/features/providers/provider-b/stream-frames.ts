import { z } from 'zod';

/**
 * Provider B's bidirectional stream messages (its public "WebSocket protocol" page for the
 * Voicebot applet): JSON text frames with snake_case fields. From the provider: `connected`,
 * `start` (stream_sid, call_sid, account_sid, from, to, custom_parameters, media_format with
 * encoding `audio/x-raw`, sample_rate and bit_rate as strings), `media` (base64 16-bit
 * little-endian PCM, about 100 ms per frame), `dtmf` (digit, duration), `mark` (echo of ours),
 * `stop`. To the provider: `media` (PCM in multiples of 320 bytes, at least 100 ms), `mark`, `clear`.
 */
const str = z.string();
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, { error: 'media.payload is not base64' }).refine((s) => s.length % 4 === 0, { error: 'media.payload is not base64 (length)' });
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
  media: z.object({ event: z.literal('media'), stream_sid: str.min(1), media: z.object({ chunk: str.optional(), timestamp: str.optional(), payload: base64 }) }),
  dtmf: z.object({ event: z.literal('dtmf'), stream_sid: str.min(1), dtmf: z.object({ digit: z.string().regex(/^[0-9*#A-Da-d]$/, { error: 'dtmf.digit must be one key' }), duration: num.optional() }) }),
  mark: z.object({ event: z.literal('mark'), stream_sid: str.min(1), mark: z.object({ name: str }) }),
  stop: z.object({ event: z.literal('stop'), stream_sid: str.min(1) }),
} as const;

export type StartB = z.infer<(typeof known)['start']>;

export type InboundFrameB =
  | { readonly kind: 'connected' }
  | { readonly kind: 'start'; readonly frame: StartB }
  | { readonly kind: 'media'; readonly streamSid: string; readonly payload: string }
  | { readonly kind: 'dtmf'; readonly streamSid: string; readonly digit: string; readonly durationMs: number }
  | { readonly kind: 'mark'; readonly streamSid: string; readonly name: string }
  | { readonly kind: 'stop'; readonly streamSid: string }
  | { readonly kind: 'unknown'; readonly event: string }
  | { readonly kind: 'malformed'; readonly problem: string };

export function parseFrameB(text: string): InboundFrameB {
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
    case 'connected':
      return { kind: 'connected' };
    case 'start':
      return { kind: 'start', frame: f };
    case 'media':
      return { kind: 'media', streamSid: f.stream_sid, payload: f.media.payload };
    case 'dtmf':
      return { kind: 'dtmf', streamSid: f.stream_sid, digit: f.dtmf.digit.toUpperCase(), durationMs: Number.isFinite(f.dtmf.duration) ? (f.dtmf.duration as number) : 0 };
    case 'mark':
      return { kind: 'mark', streamSid: f.stream_sid, name: f.mark.name };
    case 'stop':
      return { kind: 'stop', streamSid: f.stream_sid };
  }
}

export const mediaFrameB = (streamSid: string, pcm: Buffer): string => JSON.stringify({ event: 'media', stream_sid: streamSid, media: { payload: pcm.toString('base64') } });
export const markFrameB = (streamSid: string, name: string): string => JSON.stringify({ event: 'mark', stream_sid: streamSid, mark: { name } });
export const clearFrameB = (streamSid: string): string => JSON.stringify({ event: 'clear', stream_sid: streamSid });
