import { DateTime } from 'luxon';
import { AppError } from '../../../core/errors.js';
import { refusalBeforeLookup } from '../../platform/net/address-policy.js';

/**
 * The SendMessage body (spec: Campaign call request), validated field by field so each error
 * names the field the caller got wrong. Unknown fields are ignored, as Twirp's JSON decoding does.
 */
export interface SendMessageRequest {
  readonly campaignId: string;
  /** E.164 with `+`. */
  readonly to: string;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly callback?: { readonly url: string; readonly state?: Readonly<Record<string, unknown>> };
  /** Epoch ms. */
  readonly scheduledAt: number;
  readonly bypassCallingWindow: boolean;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Spec: "Recipient number including country code, digits only". E.164 allows at most 15 digits
// and no leading zero in the country code; a leading '+' is tolerated.
const phonePattern = /^\+?([1-9][0-9]{7,14})$/;
const timePattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})?$/;
const variableKeyPattern = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;
const maxVariables = 100;
const maxJsonBytes = 16 * 1024;
const maxScheduleAheadDays = 366;

const invalid = (field: string, message: string): AppError =>
  new AppError('invalid_argument', message, { meta: { argument: field }, issues: [{ path: field, message }] });

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads `ScheduledAt.Time` in the spec's three forms: `...Z` (UTC), `...+HH:MM` (that offset),
 * and no offset (the tenant's dashboard timezone, DST-aware: 02:30 on a spring-forward day does
 * not exist and moves past the gap; on a fall-back day the earlier of the two instants is used).
 */
export function parseScheduledTime(value: string, timezone: string): number | undefined {
  const match = timePattern.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction, offset] = match;
  const parts = { year: Number(y), month: Number(mo), day: Number(d), hour: Number(h), minute: Number(mi), second: Number(s) };
  const millisecond = fraction ? Math.floor(Number(`0${fraction}`) * 1000) : 0;
  const parsed = offset
    ? DateTime.fromObject({ ...parts, millisecond }, { zone: offset === 'Z' ? 'UTC' : `UTC${offset}` })
    : DateTime.fromObject({ ...parts, millisecond }, { zone: timezone });
  if (!parsed.isValid) return undefined;
  // fromObject accepts 24:00 and rolls over; the spec's forms are calendar dates, so check them.
  if (offset && (parsed.month !== parts.month || parsed.day !== parts.day || parsed.hour !== parts.hour)) return undefined;
  return parsed.toMillis();
}

function optionalObject(body: Record<string, unknown>, key: string, field: string): Record<string, unknown> | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw invalid(field, `${field} must be an object`);
  return value;
}

function checkSize(field: string, value: unknown): void {
  if (Buffer.byteLength(JSON.stringify(value), 'utf8') > maxJsonBytes) throw invalid(field, `${field} must be at most ${maxJsonBytes} bytes of JSON`);
}

export function parseSendMessage(body: unknown, context: { timezone: string; now: number }): SendMessageRequest {
  if (!isObject(body)) throw new AppError('malformed', 'request body must be a JSON object');

  const campaignId = body.CampaignID;
  if (campaignId === undefined || campaignId === null || campaignId === '') throw invalid('CampaignID', 'CampaignID is required');
  if (typeof campaignId !== 'string' || !uuidPattern.test(campaignId)) throw invalid('CampaignID', 'CampaignID must be a campaign ID (UUID)');

  const to = optionalObject(body, 'To', 'To');
  const phone = to?.PhoneNumber;
  if (phone === undefined || phone === null || phone === '') throw invalid('To.PhoneNumber', 'To.PhoneNumber is required');
  const digits = typeof phone === 'string' ? phonePattern.exec(phone.trim())?.[1] : undefined;
  if (!digits) throw invalid('To.PhoneNumber', 'To.PhoneNumber must be the number with country code, digits only (8 to 15 digits), e.g. 919876543210');

  const variablesValue = body.Variables;
  let variables: Record<string, unknown> = {};
  if (variablesValue !== undefined && variablesValue !== null) {
    if (!isObject(variablesValue)) throw invalid('Variables', 'Variables must be an object with string keys');
    const keys = Object.keys(variablesValue);
    if (keys.length > maxVariables) throw invalid('Variables', `Variables must have at most ${maxVariables} entries`);
    const bad = keys.find((k) => !variableKeyPattern.test(k));
    if (bad !== undefined) throw invalid(`Variables.${bad}`, `Variables key "${bad.slice(0, 70)}" must start with a letter or _ and use letters, digits, _ . - (at most 64)`);
    checkSize('Variables', variablesValue);
    variables = variablesValue;
  }

  const callbackValue = optionalObject(body, 'Callback', 'Callback');
  let callback: SendMessageRequest['callback'];
  if (callbackValue) {
    const url = callbackValue.URL;
    const state = callbackValue.State;
    if (url === undefined || url === null || url === '') {
      if (state !== undefined && state !== null) throw invalid('Callback.URL', 'Callback.URL is required when Callback.State is given');
    } else {
      let parsed: URL | undefined;
      try {
        parsed = typeof url === 'string' && url.length <= 2048 ? new URL(url) : undefined;
      } catch {
        parsed = undefined;
      }
      if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.username || parsed.password) {
        throw invalid('Callback.URL', 'Callback.URL must be an http(s) URL without credentials');
      }
      if (state !== undefined && state !== null && !isObject(state)) throw invalid('Callback.State', 'Callback.State must be an object');
      if (state !== undefined && state !== null) checkSize('Callback.State', state);
      callback = { url: parsed.toString(), ...(isObject(state) ? { state } : {}) };
    }
  }

  const scheduled = optionalObject(body, 'ScheduledAt', 'ScheduledAt');
  const time = scheduled?.Time;
  if (time === undefined || time === null || time === '') throw invalid('ScheduledAt.Time', 'ScheduledAt.Time is required');
  const scheduledAt = typeof time === 'string' ? parseScheduledTime(time, context.timezone) : undefined;
  if (scheduledAt === undefined) {
    throw invalid('ScheduledAt.Time', 'ScheduledAt.Time must be an ISO 8601 date-time: YYYY-MM-DDTHH:MM:SSZ, YYYY-MM-DDTHH:MM:SS+HH:MM or YYYY-MM-DDTHH:MM:SS');
  }
  if (scheduledAt > context.now + maxScheduleAheadDays * 86_400_000) {
    throw invalid('ScheduledAt.Time', `ScheduledAt.Time must be within ${maxScheduleAheadDays} days`);
  }
  const bypass = scheduled?.BypassCallingWindow;
  if (bypass !== undefined && bypass !== null && typeof bypass !== 'boolean') {
    throw invalid('ScheduledAt.BypassCallingWindow', 'ScheduledAt.BypassCallingWindow must be true or false');
  }

  return {
    campaignId: campaignId.toLowerCase(),
    to: `+${digits}`,
    variables,
    ...(callback ? { callback } : {}),
    scheduledAt,
    bypassCallingWindow: bypass === true,
  };
}

/**
 * Refuses a Callback.URL the callback delivery would refuse anyway, as far as that can be told
 * without DNS (the scheme is checked by the parser): an IP literal or a `localhost` name in a
 * loopback, private, link-local (cloud metadata) or reserved range the tenant's `ssrfAllowlist`
 * does not name. Accepting it would only queue a callback that can never be delivered. A host
 * name is resolved, and every address it resolves to checked, at delivery (control-api/platform/net/safe-http.ts).
 */
export function checkCallbackTarget(request: SendMessageRequest, allowlist: readonly string[]): void {
  if (!request.callback) return;
  const refused = refusalBeforeLookup(allowlist, new URL(request.callback.url).hostname);
  if (refused) throw invalid('Callback.URL', `Callback.URL is refused by the outbound address policy: ${refused}; add the host or its network to the tenant's settings.ssrfAllowlist to allow it`);
}
