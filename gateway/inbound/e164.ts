import type { Uri } from '../sip/message/uri.js';

/** The user part of a SIP URI or the number of a tel URI (RFC 3966), without visual separators. */
export function dialledUser(uri: Uri): string | undefined {
  let user: string | undefined;
  if (uri.scheme === 'tel' && 'number' in uri) user = uri.number;
  else if ('user' in uri) user = uri.user;
  if (!user) return undefined;
  // RFC 3966 sec. 5.1.1 visual separators; a user=phone SIP URI carries the same form.
  return user.split(';')[0]?.replace(/[\s().-]/g, '');
}

/**
 * E.164 as the directory stores it: `+` and 8-15 digits. `00` international prefixes become `+`,
 * bare digits are taken to include the country code (carriers often drop the `+`).
 */
export function normaliseE164(user: string): string | undefined {
  let v = user.replace(/[\s().-]/g, '');
  if (v.startsWith('00')) v = `+${v.slice(2)}`;
  else if (/^[1-9][0-9]{7,14}$/.test(v)) v = `+${v}`;
  return /^\+[1-9][0-9]{7,14}$/.test(v) ? v : undefined;
}

/** The caller as sent: From user (or tel number), unchanged apart from URI escapes. */
export function callerUser(uri: Uri): string | undefined {
  if (uri.scheme === 'tel' && 'number' in uri) return uri.number;
  return 'user' in uri ? uri.user : undefined;
}
