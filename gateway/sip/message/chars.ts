/** Character classes of RFC 3261 sec. 25.1, as lookup tables: no regular expressions on input. */
const TOKEN = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-.!%*_+`'~") {
  TOKEN[c.charCodeAt(0)] = 1;
}

const HOST = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._') HOST[c.charCodeAt(0)] = 1;

const IPV6 = new Uint8Array(128);
for (const c of '0123456789abcdefABCDEF:.') IPV6[c.charCodeAt(0)] = 1;

export const isTokenChar = (c: number): boolean => c < 128 && TOKEN[c] === 1;
export const isWsp = (c: number): boolean => c === 32 || c === 9;

export function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) if (!isTokenChar(s.charCodeAt(i))) return false;
  return true;
}

export function isHostname(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || HOST[c] !== 1) return false;
  }
  return true;
}

/** IPv6reference = "[" IPv6address "]" (RFC 3261 sec. 25.1); shape check only. */
export function isIpv6Reference(s: string): boolean {
  if (s.length < 4 || s.charCodeAt(0) !== 91 || s.charCodeAt(s.length - 1) !== 93) return false;
  let colons = 0;
  for (let i = 1; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || IPV6[c] !== 1) return false;
    if (c === 58) colons++;
  }
  return colons >= 2;
}

export function skipWsp(s: string, pos: number): number {
  while (pos < s.length && isWsp(s.charCodeAt(pos))) pos++;
  return pos;
}

export function hasWhitespaceOrControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 32 || c === 127) return true;
  }
  return false;
}

/** Digits only, at most `maxDigits` of them (so the value can never overflow a double). */
export function parseDigits(s: string, maxDigits = 15): number | undefined {
  if (s.length === 0 || s.length > maxDigits) return undefined;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return undefined;
    n = n * 10 + c;
  }
  return n;
}

/** Trims SP and HTAB only: String#trim would also eat U+FEFF and other Unicode spaces. */
export function trimWsp(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isWsp(s.charCodeAt(a))) a++;
  while (b > a && isWsp(s.charCodeAt(b - 1))) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}
