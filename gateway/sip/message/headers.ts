import { trimWsp } from './chars.js';

/**
 * Header fields of a SIP message, kept raw (RFC 3261 sec. 7.3): names are case-insensitive,
 * compact forms (sec. 7.3.3 and later RFCs) map to their long names, and a header may appear
 * several times. Values are parsed only when someone asks (see message.ts), which keeps the
 * common path of a UAS cheap.
 */

/** Compact forms: RFC 3261 sec. 7.3.3 plus RFC 3265, 3515, 3892, 4028, 3841, 4474, 3840. */
const COMPACT: Record<string, string> = {
  a: 'accept-contact',
  b: 'referred-by',
  c: 'content-type',
  d: 'request-disposition',
  e: 'content-encoding',
  f: 'from',
  i: 'call-id',
  j: 'reject-contact',
  k: 'supported',
  l: 'content-length',
  m: 'contact',
  n: 'identity-info',
  o: 'event',
  r: 'refer-to',
  s: 'subject',
  t: 'to',
  u: 'allow-events',
  v: 'via',
  x: 'session-expires',
  y: 'identity',
};

const SPECIAL_CASE: Record<string, string> = {
  'call-id': 'Call-ID',
  cseq: 'CSeq',
  'www-authenticate': 'WWW-Authenticate',
  'mime-version': 'MIME-Version',
  'rack': 'RAck',
  'rseq': 'RSeq',
  // RFC 4028 sec. 5 spelling; some peers (SIPp among them) match header names case-sensitively.
  'min-se': 'Min-SE',
  'sip-etag': 'SIP-ETag',
  'sip-if-match': 'SIP-If-Match',
  'p-asserted-identity': 'P-Asserted-Identity',
  'p-preferred-identity': 'P-Preferred-Identity',
};

/**
 * Headers whose value is a comma-separated list (RFC 3261 sec. 7.3.1). Others (Date,
 * WWW-Authenticate, User-Agent, unknown extensions...) may hold commas that do not separate
 * values, so they are never split.
 */
const LIST_HEADERS = new Set([
  'via', 'contact', 'route', 'record-route', 'path', 'service-route', 'accept', 'accept-encoding',
  'accept-language', 'allow', 'allow-events', 'supported', 'require', 'proxy-require', 'unsupported',
  'alert-info', 'call-info', 'error-info', 'in-reply-to', 'content-encoding', 'content-language',
  'warning', 'reason', 'p-asserted-identity', 'p-preferred-identity', 'accept-contact',
  'reject-contact', 'security-client', 'security-server', 'security-verify', 'history-info',
]);

const keyCache = new Map<string, string>();

/** The lower-case long name a header is known by. */
export function headerKey(name: string): string {
  if (name.length === 1) {
    const lower = name.toLowerCase();
    return COMPACT[lower] ?? lower;
  }
  const hit = keyCache.get(name);
  if (hit !== undefined) return hit;
  const lower = name.toLowerCase();
  const key = lower.length === 1 ? (COMPACT[lower] ?? lower) : lower;
  // Bounded: a hostile peer sending random header names must not grow this cache forever.
  if (keyCache.size < 2048) keyCache.set(name, key);
  return key;
}

/** The canonical spelling a serializer writes (`call-id` -> `Call-ID`, `v` -> `Via`). */
export function canonicalName(key: string): string {
  const special = SPECIAL_CASE[key];
  if (special) return special;
  let out = '';
  let upper = true;
  for (const ch of key) {
    out += upper ? ch.toUpperCase() : ch;
    upper = ch === '-';
  }
  return out;
}

const KNOWN = new Set([
  ...Object.values(COMPACT), ...Object.keys(SPECIAL_CASE), ...LIST_HEADERS,
  'accept', 'authentication-info', 'authorization', 'content-disposition', 'date', 'expires',
  'max-forwards', 'min-expires', 'min-se', 'organization', 'priority', 'proxy-authenticate',
  'proxy-authorization', 'reply-to', 'retry-after', 'server', 'timestamp', 'user-agent', 'rseq',
  'subscription-state', 'replaces', 'privacy', 'p-charging-vector', 'content-transfer-encoding',
]);

const canonicalOfKnown = new Map<string, string>([...KNOWN].map((k) => [k, canonicalName(k)]));

/** Known headers are written canonically; unknown ones keep the sender's spelling. */
export function serializedName(key: string, written: string): string {
  return canonicalOfKnown.get(key) ?? written;
}

export const isListHeader = (key: string): boolean => LIST_HEADERS.has(key);

/** Splits a header value on commas outside quoted strings and angle brackets. */
export function splitList(value: string): string[] {
  if (value.indexOf(',') < 0) return [trimWsp(value)];
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (quoted) {
      if (c === 92) i++;
      else if (c === 34) quoted = false;
    } else if (c === 34) quoted = true;
    else if (c === 60) depth++;
    else if (c === 62 && depth > 0) depth--;
    else if (c === 44 && depth === 0) {
      out.push(trimWsp(value.slice(start, i)));
      start = i + 1;
    }
  }
  out.push(trimWsp(value.slice(start)));
  return out;
}

export class Headers {
  private readonly keys: string[] = [];
  private readonly names: string[] = [];
  private readonly vals: string[] = [];
  /** Bumped on every change so parsed views of the message know when to re-parse. */
  version = 0;

  constructor(init?: Iterable<readonly [string, string]>) {
    if (init) for (const [n, v] of init) this.append(n, v);
  }

  get size(): number {
    return this.keys.length;
  }

  /** First value of the header, as received (folding already collapsed to single spaces). */
  get(name: string): string | undefined {
    const i = this.keys.indexOf(headerKey(name));
    return i < 0 ? undefined : this.vals[i];
  }

  has(name: string): boolean {
    return this.keys.indexOf(headerKey(name)) >= 0;
  }

  /** The value of a header that must appear once: undefined if absent, null if repeated. */
  only(name: string): string | null | undefined {
    const key = headerKey(name);
    let found: string | undefined;
    for (let i = 0; i < this.keys.length; i++) {
      if (this.keys[i] === key) {
        if (found !== undefined) return null;
        found = this.vals[i] ?? '';
      }
    }
    return found;
  }

  /** Number of header lines with this name (not values: see `values`). */
  count(name: string): number {
    const key = headerKey(name);
    let n = 0;
    for (const k of this.keys) if (k === key) n++;
    return n;
  }

  /** One entry per header line. */
  getAll(name: string): string[] {
    const key = headerKey(name);
    const out: string[] = [];
    for (let i = 0; i < this.keys.length; i++) if (this.keys[i] === key) out.push(this.vals[i] ?? '');
    return out;
  }

  /** Every value: lines of list headers are split on their commas (RFC 3261 sec. 7.3.1). */
  values(name: string): string[] {
    const key = headerKey(name);
    const lines = this.getAll(key);
    if (!isListHeader(key)) return lines;
    const out: string[] = [];
    for (const line of lines) for (const v of splitList(line)) out.push(v);
    return out;
  }

  append(name: string, value: string): this {
    this.keys.push(headerKey(name));
    this.names.push(name);
    this.vals.push(value);
    this.version++;
    return this;
  }

  /** Adds before the first header of that name (a proxy's new Via goes on top). */
  prepend(name: string, value: string): this {
    const key = headerKey(name);
    const i = this.keys.indexOf(key);
    const at = i < 0 ? this.keys.length : i;
    this.keys.splice(at, 0, key);
    this.names.splice(at, 0, name);
    this.vals.splice(at, 0, value);
    this.version++;
    return this;
  }

  /** Replaces the first line of that header only (a transport stamping the top Via). */
  replaceFirst(name: string, value: string): this {
    const i = this.keys.indexOf(headerKey(name));
    if (i < 0) return this.append(name, value);
    this.vals[i] = value;
    this.version++;
    return this;
  }

  /** Replaces every line of that header by one value, keeping the position of the first. */
  set(name: string, value: string): this {
    const key = headerKey(name);
    const i = this.keys.indexOf(key);
    if (i < 0) return this.append(name, value);
    this.vals[i] = value;
    for (let j = this.keys.length - 1; j > i; j--) {
      if (this.keys[j] === key) this.removeAt(j);
    }
    this.version++;
    return this;
  }

  delete(name: string): number {
    const key = headerKey(name);
    let n = 0;
    for (let j = this.keys.length - 1; j >= 0; j--) {
      if (this.keys[j] === key) {
        this.removeAt(j);
        n++;
      }
    }
    if (n) this.version++;
    return n;
  }

  /** [key, name as written, value] for each line, in order. */
  *lines(): IterableIterator<[string, string, string]> {
    for (let i = 0; i < this.keys.length; i++) yield [this.keys[i] ?? '', this.names[i] ?? '', this.vals[i] ?? ''];
  }

  /** Internal fast path for serializers: index access without generator overhead. */
  keyAt(i: number): string {
    return this.keys[i] ?? '';
  }

  nameAt(i: number): string {
    return this.names[i] ?? '';
  }

  valueAt(i: number): string {
    return this.vals[i] ?? '';
  }

  private removeAt(j: number): void {
    this.keys.splice(j, 1);
    this.names.splice(j, 1);
    this.vals.splice(j, 1);
  }
}
