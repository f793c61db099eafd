import { isWsp, parseDigits, trimWsp } from './chars.js';
import { SipParseError } from './errors.js';
import { Headers, splitList } from './headers.js';
import { parseNameAddr, type NameAddr } from './name-addr.js';
import { parseUri, type Uri } from './uri.js';
import { parseViaValues, stampTopVia, type Via } from './via.js';

export interface CSeq {
  readonly seq: number;
  readonly method: string;
}

/** The body of a message without one: shared, since a zero-length Buffer cannot be written to. */
export const EMPTY_BODY: Buffer = Buffer.alloc(0);

/** RFC 3261 sec. 8.1.1.5: the sequence number MUST be less than 2**31. */
const MAX_CSEQ = 2 ** 31 - 1;

export function parseCSeq(value: string): CSeq {
  let i = 0;
  while (i < value.length && value.charCodeAt(i) >= 48 && value.charCodeAt(i) <= 57) i++;
  const seq = parseDigits(value.slice(0, i), 10);
  if (seq === undefined || seq > MAX_CSEQ) throw new SipParseError(`CSeq number out of range: ${value.slice(0, 40)}`);
  const method = trimWsp(value.slice(i));
  if (method.length === 0 || i === 0 || !isWsp(value.charCodeAt(i))) {
    throw new SipParseError(`malformed CSeq: ${value.slice(0, 40)}`);
  }
  for (let j = 0; j < method.length; j++) {
    const c = method.charCodeAt(j);
    if (c <= 32 || c >= 127) throw new SipParseError(`malformed CSeq method: ${method.slice(0, 40)}`);
  }
  return { seq, method };
}

/**
 * What every SIP message has. Raw headers are the source of truth; the parsed views below are
 * computed on first use and dropped when the headers change (Headers.version).
 */
export abstract class SipMessage {
  private viewVersion = -1;
  private viaView: Via[] | undefined;
  private fromView: NameAddr | undefined;
  private toView: NameAddr | undefined;
  private cseqView: CSeq | undefined;
  private contactsView: NameAddr[] | undefined;

  constructor(
    readonly headers: Headers,
    public body: Buffer,
  ) {}

  abstract get isRequest(): boolean;

  private sync(): void {
    if (this.viewVersion !== this.headers.version) {
      this.viewVersion = this.headers.version;
      this.viaView = undefined;
      this.fromView = undefined;
      this.toView = undefined;
      this.cseqView = undefined;
      this.contactsView = undefined;
    }
  }

  /** Every via-parm, top first. */
  get via(): readonly Via[] {
    this.sync();
    return (this.viaView ??= parseViaValues(this.headers.getAll('via')));
  }

  get topVia(): Via {
    const v = this.via[0];
    if (!v) throw new SipParseError('missing Via');
    return v;
  }

  get from(): NameAddr {
    this.sync();
    return (this.fromView ??= parseNameAddr(this.single('from')));
  }

  get to(): NameAddr {
    this.sync();
    return (this.toView ??= parseNameAddr(this.single('to')));
  }

  get callId(): string {
    return this.single('call-id');
  }

  get cseq(): CSeq {
    this.sync();
    return (this.cseqView ??= parseCSeq(this.single('cseq')));
  }

  get maxForwards(): number | undefined {
    const v = this.headers.get('max-forwards');
    if (v === undefined) return undefined;
    const n = parseDigits(v, 10);
    if (n === undefined || n > 255) throw new SipParseError(`Max-Forwards out of range: ${v.slice(0, 20)}`);
    return n;
  }

  get contentType(): string | undefined {
    return this.headers.get('content-type');
  }

  /**
   * Contact values (RFC 3261 sec. 20.10); `*` only as REGISTER's remove-all. Cached like the
   * other views: the parser's validation and the dialog read the same parse.
   */
  get contacts(): readonly NameAddr[] {
    this.sync();
    return (this.contactsView ??= this.headers.values('contact').map((v) => parseNameAddr(v, { allowWildcard: true })));
  }

  get routes(): NameAddr[] {
    return this.headers.values('route').map((v) => parseNameAddr(v));
  }

  get recordRoutes(): NameAddr[] {
    return this.headers.values('record-route').map((v) => parseNameAddr(v));
  }

  /** Values of a list header such as Require or Supported, split on commas. */
  list(name: string): string[] {
    return this.headers.values(name).flatMap((v) => splitList(v)).filter((v) => v.length > 0);
  }

  /** Called by the parser after validating, so the views need not be parsed twice. */
  primeViews(via: Via[], from: NameAddr, to: NameAddr, cseq: CSeq): void {
    this.viewVersion = this.headers.version;
    this.viaView = via;
    this.fromView = from;
    this.toView = to;
    this.cseqView = cseq;
  }

  /**
   * A server transport's received/rport stamp on the top Via (RFC 3261 sec. 18.2.1, RFC 3581
   * sec. 4), done on the parsed view: the From, To and CSeq views stay, and the Via is not
   * parsed again.
   */
  stampReceived(sourceIp: string, sourcePort: number): void {
    const vias = this.via;
    const first = this.headers.get('via');
    const top = vias[0];
    if (first === undefined || top === undefined) return;
    const parts = splitList(first);
    const stamped = stampTopVia(top, parts, sourceIp, sourcePort);
    this.headers.replaceFirst('via', stamped.line);
    this.viewVersion = this.headers.version;
    this.viaView = [stamped.top, ...vias.slice(1)];
  }

  private single(key: string): string {
    const v = this.headers.get(key);
    if (v === undefined) throw new SipParseError(`missing ${key}`);
    return v;
  }
}

export class SipRequest extends SipMessage {
  private parsedUri: Uri | undefined;

  constructor(
    public method: string,
    /** Request-URI text as received (RFC 3261 sec. 7.1). */
    public uri: string,
    headers: Headers = new Headers(),
    body: Buffer = EMPTY_BODY,
  ) {
    super(headers, body);
  }

  get isRequest(): boolean {
    return true;
  }

  get requestUri(): Uri {
    if (this.parsedUri === undefined || this.parsedUri.raw !== this.uri) this.parsedUri = parseUri(this.uri);
    return this.parsedUri;
  }
}

export class SipResponse extends SipMessage {
  constructor(
    public status: number,
    public reason: string,
    headers: Headers = new Headers(),
    body: Buffer = EMPTY_BODY,
  ) {
    super(headers, body);
  }

  get isRequest(): boolean {
    return false;
  }
}

export const isRequest = (m: SipMessage): m is SipRequest => m.isRequest;
export const isResponse = (m: SipMessage): m is SipResponse => !m.isRequest;
