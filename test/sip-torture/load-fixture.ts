import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Loads an RFC 4475 test message. The files keep the RFC's own notation (sec. 2): lines end in
 * CRLF on the wire, <allOneLine> joins its lines, <repeat count=N> repeats its text, and <hex>
 * stands for raw octets (which may be CR, LF, NUL or non-UTF-8, so it is expanded last).
 */
const messagesDir = join(dirname(fileURLToPath(import.meta.url)), 'messages');

export function expandRfc4475Markup(text: string): Buffer {
  let s = text.replace(/<allOneLine>\n([\s\S]*?)\n<\/allOneLine>/g, (_m, body: string) => body.replace(/\n/g, ''));
  s = s.replace(/<repeat count=(\d+)>([\s\S]*?)<\/repeat>/g, (_m, n: string, body: string) => body.repeat(Number(n)));
  s = s.replace(/\n/g, '\r\n');
  const parts: Buffer[] = [];
  let last = 0;
  for (const m of s.matchAll(/<hex>([\s\S]*?)<\/hex>/g)) {
    parts.push(Buffer.from(s.slice(last, m.index), 'utf8'));
    parts.push(Buffer.from((m[1] ?? '').replace(/\s+/g, ''), 'hex'));
    last = (m.index ?? 0) + m[0].length;
  }
  parts.push(Buffer.from(s.slice(last), 'utf8'));
  return Buffer.concat(parts);
}

export function loadTortureMessage(name: string): Buffer {
  return expandRfc4475Markup(readFileSync(join(messagesDir, `${name}.sip`), 'utf8'));
}

export function tortureMessageNames(): string[] {
  return readdirSync(messagesDir)
    .filter((f) => f.endsWith('.sip'))
    .map((f) => f.slice(0, -4))
    .sort();
}

/**
 * A message as the RFC's bit-exact archive (the base64 tarball in its appendix) carries it,
 * octet for octet, where that differs from the figure: baddn.dat ends "l: 0" CRLF, no empty line.
 */
export function loadBitExactMessage(name: string): Buffer {
  return readFileSync(join(dirname(messagesDir), 'bit-exact', `${name}.dat`));
}
