import { isToken, isWsp, trimWsp } from './chars.js';
import { headerKey, splitList } from './headers.js';
import { parseViaParm, responseTarget, stampTopVia, type Via } from './via.js';

const CRLFCRLF = Buffer.from('\r\n\r\n');
const LFLF = Buffer.from('\n\n');
/** Heads longer than this are not peeked (the parser judges them); real requests are far shorter. */
const MAX_PEEK_BYTES = 16 * 1024;

/**
 * A look at a datagram's head without parsing the message (RFC 3261 sec. 7): the start line's
 * method, and header fields by name on demand, found by one linear scan of the header lines.
 * What admission control needs before deciding whether the message is worth a full parse; never
 * a validation (a malformed message the peek accepts is judged by the parser later).
 */
export class PeekedHead {
  private names: string[] | undefined;
  private values: string[] | undefined;
  private tag: string | null | undefined;
  private via: Via | null | undefined;

  private constructor(
    /** The head as latin1 (one char per octet, so it goes back to the wire unchanged). */
    private readonly text: string,
    /** Request method; '' for a response. */
    readonly method: string,
    private readonly headersFrom: number,
  ) {}

  /** Undefined when the datagram has no recognisable start line. */
  static of(buf: Buffer): PeekedHead | undefined {
    let start = 0;
    while (start < buf.length && (buf[start] === 13 || buf[start] === 10)) start++;
    const limit = Math.min(buf.length, start + MAX_PEEK_BYTES);
    let end = buf.indexOf(CRLFCRLF, start);
    if (end < 0 || end > limit) end = buf.indexOf(LFLF, start);
    // Without an empty line the datagram is all head, as the parser reads it (parseDatagram).
    if (end < 0 && buf.length <= limit) end = buf.length;
    if (end < 0 || end > limit) return undefined;
    const text = buf.toString('latin1', start, end);
    let eol = text.indexOf('\n');
    if (eol < 0) eol = text.length;
    const sp = text.indexOf(' ');
    if (sp <= 0 || sp > eol) return undefined;
    const first = text.slice(0, sp);
    // Status-Line (sec. 7.2) or Request-Line (sec. 7.1): the method is a token.
    if (first.toUpperCase() === 'SIP/2.0') return new PeekedHead(text, '', eol + 1);
    return isToken(first) ? new PeekedHead(text, first, eol + 1) : undefined;
  }

  get isResponse(): boolean {
    return this.method === '';
  }

  /** First value of a header (long name in lower case; compact forms match too). */
  header(key: string): string | undefined {
    this.index();
    const i = (this.names as string[]).indexOf(key);
    return i < 0 ? undefined : (this.values as string[])[i];
  }

  /** Every value of a header, in order. */
  headerAll(key: string): string[] {
    this.index();
    const out: string[] = [];
    (this.names as string[]).forEach((n, i) => {
      if (n === key) out.push((this.values as string[])[i] as string);
    });
    return out;
  }

  /** The To header's tag (sec. 19.3), outside the URI's angle brackets. */
  get toTag(): string | undefined {
    if (this.tag === undefined) this.tag = findTag(this.header('to') ?? '') ?? null;
    return this.tag ?? undefined;
  }

  /** The top via-parm (sec. 20.42), parsed; undefined when absent or malformed. */
  get topVia(): Via | undefined {
    if (this.via === undefined) {
      const first = this.header('via');
      try {
        this.via = first === undefined ? null : parseViaParm(splitList(first)[0] ?? '');
      } catch {
        this.via = null;
      }
    }
    return this.via ?? undefined;
  }

  /** Header lines split once, folded lines joined (sec. 7.3.1); a line without colon is skipped. */
  private index(): void {
    if (this.names) return;
    const names: string[] = [];
    const values: string[] = [];
    const t = this.text;
    let pos = this.headersFrom;
    while (pos < t.length) {
      const nl = t.indexOf('\n', pos);
      const next = nl < 0 ? t.length : nl + 1;
      const end = nl > pos && t.charCodeAt(nl - 1) === 13 ? nl - 1 : nl < 0 ? t.length : nl;
      if (isWsp(t.charCodeAt(pos))) {
        if (values.length > 0) values[values.length - 1] += ` ${trimWsp(t.slice(pos, end))}`;
      } else {
        const colon = t.indexOf(':', pos);
        if (colon > pos && colon < end) {
          names.push(headerKey(trimWsp(t.slice(pos, colon))));
          values.push(trimWsp(t.slice(colon + 1, end)));
        }
      }
      pos = next;
    }
    this.names = names;
    this.values = values;
  }
}

/** `tag` param of a To/From value: after the `>` of a name-addr, else anywhere (addr-spec form). */
function findTag(value: string): string | undefined {
  let from = 0;
  if (value.includes('<')) {
    let quoted = false;
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if (c === 34 && value.charCodeAt(i - 1) !== 92) quoted = !quoted;
      else if (c === 62 && !quoted) {
        from = i + 1;
        break;
      }
    }
  }
  const params = value.slice(from).split(';');
  for (let i = 1; i < params.length; i++) {
    const p = params[i] as string;
    const eq = p.indexOf('=');
    if (eq > 0 && trimWsp(p.slice(0, eq)).toLowerCase() === 'tag') {
      const tag = trimWsp(p.slice(eq + 1));
      return tag.length > 0 ? tag : undefined;
    }
  }
  return undefined;
}

/** A stateless answer as octets, and the port it goes to on the request's source address. */
export interface PeekedResponse {
  readonly wire: Buffer;
  readonly port: number;
}

/**
 * A final response to a peeked request, written straight from its header lines (RFC 3261 sec.
 * 8.2.6.2: Via, From, To, Call-ID and CSeq copied, a To tag added; the top Via stamped with
 * `received`/`rport` as sec. 18.2.1 and RFC 3581 sec. 4 want). It goes to the source address at
 * the port sec. 18.2.2 names (rport: the source port; else sent-by's, 5060 by default): never to
 * a Via host or maddr, so a refusal cannot be reflected at a third party. Undefined when the
 * request lacks one of those headers or its top Via does not parse: such a request is not answered.
 */
export function peekedResponse(
  head: PeekedHead,
  source: { readonly address: string; readonly port: number },
  status: string,
  toTag: string,
  extra: ReadonlyArray<readonly [string, string]>,
): PeekedResponse | undefined {
  const vias = head.headerAll('via');
  const from = head.header('from');
  const to = head.header('to');
  const callId = head.header('call-id');
  const cseq = head.header('cseq');
  if (vias.length === 0 || !from || !to || !callId || !cseq) return undefined;
  let port: number;
  try {
    const parts = splitList(vias[0] as string);
    const stamped = stampTopVia(parseViaParm(parts[0] ?? ''), parts, source.address, source.port);
    vias[0] = stamped.line;
    port = responseTarget(stamped.top).port;
  } catch {
    return undefined;
  }
  let out = `SIP/2.0 ${status}\r\n`;
  for (const v of vias) out += `Via: ${v}\r\n`;
  out += `From: ${from}\r\nTo: ${head.toTag === undefined ? `${to};tag=${toTag}` : to}\r\nCall-ID: ${callId}\r\nCSeq: ${cseq}\r\n`;
  for (const [n, v] of extra) out += `${n}: ${v}\r\n`;
  return { wire: Buffer.from(`${out}Content-Length: 0\r\n\r\n`, 'latin1'), port };
}
