import { z } from 'zod';

/**
 * Field rules shared by every resource kind. Messages name the field and the bound, because they
 * travel to the API caller unchanged (`issues[].message`) and must make sense without context.
 */

/** Natural key of a named resource: readable in YAML and URLs, unique per tenant and kind. */
export const resourceNamePattern = /^[A-Za-z0-9][A-Za-z0-9 ._()-]*$/;

export const resourceName = (field = 'name') =>
  z
    .string({ error: `${field} must be a string` })
    .min(1, { error: `${field} is required`, abort: true })
    .max(100, { error: `${field} must be at most 100 characters` })
    .regex(resourceNamePattern, {
      error: `${field} must start with a letter or digit and contain only letters, digits, spaces and . _ - ( )`,
    })
    .refine((v) => v === v.trim(), { error: `${field} must not end with a space` });

/** System name of a variable / insight parameter: usable in `{{name}}`, report columns and JSON. */
export const identifierPattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export const identifier = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .regex(identifierPattern, {
      error: `${field} must be an identifier: a letter or '_' followed by letters, digits or '_', at most 64 characters`,
    });

/** BCP 47 language tag such as `en`, `hi-IN`, `ar`, `ta-IN`. */
export const languageTagPattern = /^[a-z]{2,3}(-[A-Za-z]{4})?(-([A-Z]{2}|[0-9]{3}))?$/;

export const languageTag = (field = 'language') =>
  z
    .string({ error: `${field} must be a string` })
    .regex(languageTagPattern, { error: `${field} must be a BCP 47 language tag such as 'en', 'hi-IN' or 'ar'` });

export const text = (field: string, max: number) =>
  z.string({ error: `${field} must be a string` }).max(max, { error: `${field} must be at most ${max} characters` });

export const requiredText = (field: string, max: number) =>
  text(field, max).min(1, { error: `${field} is required` });

/** Integer bound with the unit in the message: "ringDurationSeconds must be between 15 and 30 seconds". */
export const boundedInt = (field: string, min: number, max: number, unit = '') => {
  const message = `${field} must be between ${min} and ${max}${unit ? ` ${unit}` : ''}`;
  return z
    .number({ error: `${field} must be a number` })
    .int({ error: `${field} must be a whole number` })
    .min(min, { error: message })
    .max(max, { error: message });
};

export const tag = z
  .string({ error: 'tag must be a string' })
  .min(1, { error: 'tag must not be empty' })
  .max(50, { error: 'tag must be at most 50 characters' });

export const tagList = (field = 'tags', max = 50) =>
  z.array(tag).max(max, { error: `${field} must have at most ${max} entries` });

export const httpUrl = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .max(2048, { error: `${field} must be at most 2048 characters` })
    .refine(isHttpUrl, { error: `${field} must be an absolute http or https URL` });

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** E.164: '+' then 8 to 15 digits, first digit non-zero (ITU-T E.164 sec. 6). */
export const e164Pattern = /^\+[1-9][0-9]{7,14}$/;

/**
 * Accepts the forms people type ("+91 98765-43210", "0091 ...", "(415) 555 0100" with '+1') and
 * normalises to strict E.164, so lookups by number never depend on formatting.
 */
export function normaliseE164(input: string): string | undefined {
  const raw = input.trim();
  let value = raw.replace(/[\s().-]/g, '');
  if (value.startsWith('00')) value = `+${value.slice(2)}`;
  // Bare digits are read as including the country code (SendMessage's To.PhoneNumber form);
  // formatted input without '+' or '00' is a national number and stays ambiguous.
  else if (/^[1-9][0-9]{7,14}$/.test(raw)) value = `+${raw}`;
  return e164Pattern.test(value) ? value : undefined;
}

export const e164 = (field = 'phoneNumber') =>
  z
    .string({ error: `${field} must be a string` })
    .transform((value, ctx) => {
      const normalised = normaliseE164(value);
      if (!normalised) {
        ctx.addIssue({
          code: 'custom',
          input: value,
          message: `${field} must be a phone number with country code in E.164 form, e.g. +14155550100`,
        });
        return z.NEVER;
      }
      return normalised;
    })
    // Said in the output schema: what is stored and returned is the normalised E.164 string.
    .pipe(z.string().regex(e164Pattern));

/** IANA timezone name, checked against the runtime's tz database through Intl. */
export function isIanaTimezone(value: string): boolean {
  if (value.length === 0 || value.length > 64) return false;
  // ICU also accepts abbreviations such as 'IST' (ambiguous: India, Israel, Ireland); IANA names are Area/Location.
  if (value !== 'UTC' && value !== 'GMT' && !/^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)+$/.test(value)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

export const ianaTimezone = (field = 'timezone') =>
  z
    .string({ error: `${field} must be a string` })
    .refine(isIanaTimezone, { error: `${field} must be an IANA timezone such as 'Asia/Kolkata' or 'UTC'` });

/** HH:MM, 24 h clock. */
export const clockTime = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, { error: `${field} must be a time of day as HH:MM (00:00 to 23:59)` });

/** Reports duplicate values of `key` in `items` as issues on `field[i].key`. */
export function checkUnique<T>(
  items: readonly T[],
  key: (item: T) => string,
  ctx: z.RefinementCtx,
  path: (string | number)[],
  keyName: string,
  what: string,
): void {
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const value = key(item);
    const first = seen.get(value);
    if (first !== undefined) {
      ctx.addIssue({
        code: 'custom',
        input: value,
        path: [...path, index, keyName],
        message: `${what} '${value}' is defined twice (also at index ${first})`,
      });
    } else {
      seen.set(value, index);
    }
  });
}
