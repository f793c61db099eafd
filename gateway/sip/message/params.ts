import { isTokenChar, skipWsp } from './chars.js';
import { SipParseError } from './errors.js';

/**
 * Header parameters (generic-param of RFC 3261 sec. 25.1): names are case-insensitive, a
 * parameter may have no value (`;lr`), and values may be quoted strings.
 */
export class Params {
  /** Flat [name, lower-case key, value, quoted] per parameter: one allocation, not four. */
  private items: (string | null | boolean)[] | undefined;

  get size(): number {
    return this.items ? this.items.length / 4 : 0;
  }

  private find(name: string): number {
    const items = this.items;
    if (!items) return -1;
    const key = name.toLowerCase();
    for (let i = 1; i < items.length; i += 4) if (items[i] === key) return i - 1;
    return -1;
  }

  /** `undefined` when absent, `null` when present without a value (`;rport`). */
  get(name: string): string | null | undefined {
    const i = this.find(name);
    return i < 0 ? undefined : (this.items?.[i + 2] as string | null);
  }

  has(name: string): boolean {
    return this.find(name) >= 0;
  }

  set(name: string, value: string | null, quoted = false): this {
    const i = this.find(name);
    if (i >= 0 && this.items) {
      this.items[i + 2] = value;
      this.items[i + 3] = quoted;
    } else {
      (this.items ??= []).push(name, name.toLowerCase(), value, quoted);
    }
    return this;
  }

  /** Appends without looking for an earlier one (the parser's path: linear in the count). */
  add(name: string, value: string | null, quoted = false): this {
    (this.items ??= []).push(name, name.toLowerCase(), value, quoted);
    return this;
  }

  delete(name: string): boolean {
    const i = this.find(name);
    if (i < 0 || !this.items) return false;
    this.items.splice(i, 4);
    return true;
  }

  entries(): [string, string | null][] {
    const out: [string, string | null][] = [];
    const items = this.items ?? [];
    for (let i = 0; i < items.length; i += 4) out.push([items[i] as string, items[i + 2] as string | null]);
    return out;
  }

  toString(): string {
    let out = '';
    const items = this.items ?? [];
    for (let i = 0; i < items.length; i += 4) {
      const v = items[i + 2] as string | null;
      out += `;${items[i] as string}`;
      if (v !== null) out += items[i + 3] ? `=${quoteString(v)}` : `=${v}`;
    }
    return out;
  }
}

export function quoteString(v: string): string {
  return `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/** Reads a quoted-string starting at `pos` (a DQUOTE); returns the unescaped text and end. */
export function readQuotedString(s: string, pos: number): { value: string; end: number } {
  let out = '';
  let i = pos + 1;
  let from = i;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c === 92) {
      // quoted-pair (RFC 3261 sec. 25.1): backslash escapes any octet except CR and LF.
      if (i + 1 >= s.length) break;
      out += s.slice(from, i) + s[i + 1];
      i += 2;
      from = i;
      continue;
    }
    if (c === 34) return { value: out + s.slice(from, i), end: i + 1 };
    i++;
  }
  throw new SipParseError('unterminated quoted string');
}

const VALUE_EXTRA = new Set([58, 91, 93]); // ':' '[' ']' for gen-value = token / host

/**
 * Parses `*( SEMI generic-param )` from `pos`, stopping at the first character that cannot
 * continue the list; the caller decides whether what follows is allowed.
 */
export function parseParamsAt(s: string, pos: number, into: Params): number {
  let i = skipWsp(s, pos);
  while (i < s.length && s.charCodeAt(i) === 59) {
    i = skipWsp(s, i + 1);
    const nameStart = i;
    while (i < s.length && isTokenChar(s.charCodeAt(i))) i++;
    if (i === nameStart) throw new SipParseError('empty parameter');
    const name = s.slice(nameStart, i);
    i = skipWsp(s, i);
    if (i < s.length && s.charCodeAt(i) === 61) {
      i = skipWsp(s, i + 1);
      if (s.charCodeAt(i) === 34) {
        const q = readQuotedString(s, i);
        into.add(name, q.value, true);
        i = q.end;
      } else {
        const valueStart = i;
        while (i < s.length) {
          const c = s.charCodeAt(i);
          if (!isTokenChar(c) && !VALUE_EXTRA.has(c)) break;
          i++;
        }
        if (i === valueStart) throw new SipParseError(`parameter ${name} has an empty value`);
        into.add(name, s.slice(valueStart, i));
      }
    } else {
      into.add(name, null);
    }
    i = skipWsp(s, i);
  }
  return i;
}
