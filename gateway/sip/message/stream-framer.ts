import { SipParseError } from './errors.js';
import type { SipMessage } from './message.js';
import { buildMessage, declaredContentLength, parseHead, type ParsedHead } from './parser.js';

export interface FramerLimits {
  /** Largest head (start line + headers) accepted; beyond it the connection is dropped. */
  readonly maxHeaderBytes?: number;
  readonly maxBodyBytes?: number;
}

export type FramedItem =
  | { readonly kind: 'message'; readonly message: SipMessage }
  /** Well framed but malformed: answer it if `error.canRespond`, the stream stays usable. */
  | { readonly kind: 'invalid'; readonly error: SipParseError }
  /** RFC 5626 sec. 4.4.1: a double-CRLF ping, which a server answers with a single CRLF pong. */
  | { readonly kind: 'ping' };

const CRLFCRLF = Buffer.from('\r\n\r\n');
const EMPTY = Buffer.alloc(0);

/**
 * Frames messages on a TCP/TLS byte stream (RFC 3261 sec. 18.3): the head ends at the first
 * empty line and Content-Length, mandatory here, says where the body ends. Memory is bounded by
 * the limits, so a peer that never finishes a message cannot make us buffer without end; a
 * framing error is thrown with `fatal` set, after which the connection must be closed.
 */
export class StreamFramer {
  /** Receive buffer with spare capacity, grown by doubling: appending is amortized O(chunk). */
  private store: Buffer = EMPTY;
  private start = 0;
  private end = 0;
  /** Where to resume looking for the end of the head, so slow senders cost O(n) overall. */
  private searchFrom = 0;
  private pending: { head: ParsedHead; bodyStart: number; length: number } | undefined;
  private readonly maxHeaderBytes: number;
  private readonly maxBodyBytes: number;

  constructor(limits: FramerLimits = {}) {
    this.maxHeaderBytes = limits.maxHeaderBytes ?? 64 * 1024;
    this.maxBodyBytes = limits.maxBodyBytes ?? 1024 * 1024;
  }

  /** Bytes held for an incomplete message. */
  get buffered(): number {
    return this.end - this.start;
  }

  private get buf(): Buffer {
    return this.store.subarray(this.start, this.end);
  }

  private consume(n: number): void {
    this.start += n;
    if (this.start >= this.end) this.start = this.end = 0;
  }

  private append(chunk: Buffer): void {
    if (this.end + chunk.length > this.store.length) {
      const live = this.end - this.start;
      const needed = live + chunk.length;
      if (needed > this.store.length / 2 || this.store.length === 0) {
        const grown = Buffer.allocUnsafe(Math.max(needed, this.store.length * 2, 4096));
        this.store.copy(grown, 0, this.start, this.end);
        this.store = grown;
      } else {
        this.store.copy(this.store, 0, this.start, this.end);
      }
      this.start = 0;
      this.end = live;
    }
    chunk.copy(this.store, this.end);
    this.end += chunk.length;
  }

  push(chunk: Buffer): FramedItem[] {
    this.append(chunk);
    const out: FramedItem[] = [];
    for (;;) {
      if (!this.pending) {
        if (!this.skipKeepAlives(out)) break;
        const headEnd = this.buf.indexOf(CRLFCRLF, this.searchFrom);
        if (headEnd < 0) {
          if (this.buf.length > this.maxHeaderBytes) throw this.fatal('message head too large');
          this.searchFrom = Math.max(0, this.buf.length - 3);
          break;
        }
        if (headEnd > this.maxHeaderBytes) throw this.fatal('message head too large');
        let head: ParsedHead;
        let length: number | undefined;
        try {
          head = parseHead(this.buf.toString('utf8', 0, headEnd));
          length = declaredContentLength(head.headers);
        } catch (e) {
          if (e instanceof SipParseError) throw this.fatal(e.reason);
          throw e;
        }
        // RFC 3261 sec. 18.3: on a stream, Content-Length is the only way to find the end.
        if (length === undefined) throw this.fatal('Content-Length is mandatory on stream transports');
        if (length > this.maxBodyBytes) throw this.fatal(`body of ${length} octets exceeds the limit`);
        this.pending = { head, bodyStart: headEnd + 4, length };
      }
      const { head, bodyStart, length } = this.pending;
      if (this.buf.length < bodyStart + length) break;
      // Copy: the body must not pin (or alias) the connection's receive buffer.
      const body = Buffer.from(this.buf.subarray(bodyStart, bodyStart + length));
      this.consume(bodyStart + length);
      this.pending = undefined;
      this.searchFrom = 0;
      try {
        out.push({ kind: 'message', message: buildMessage(head, body) });
      } catch (e) {
        if (!(e instanceof SipParseError)) throw e;
        out.push({ kind: 'invalid', error: e });
      }
    }
    if (this.buffered === 0 && this.store.length > 256 * 1024) this.store = EMPTY;
    return out;
  }

  /** Consumes CRLFs before a start line; returns false when more bytes are needed. */
  private skipKeepAlives(out: FramedItem[]): boolean {
    for (;;) {
      if (this.buf.length === 0) return false;
      if (this.buf[0] !== 13 && this.buf[0] !== 10) return true;
      if (this.buf.length >= 4 && this.buf.subarray(0, 4).equals(CRLFCRLF)) {
        out.push({ kind: 'ping' });
        this.consume(4);
      } else if (this.buf.length >= 2 && this.buf[0] === 13 && this.buf[1] === 10) {
        // A lone CRLF is a pong, or half a ping still in flight: wait if nothing follows it.
        if (this.buf.length < 4 && (this.buf.length === 2 || this.buf[2] === 13)) return false;
        this.consume(2);
      } else if (this.buf[0] === 13 && this.buf.length === 1) {
        return false;
      } else {
        this.consume(1);
      }
      this.searchFrom = 0;
    }
  }

  private fatal(reason: string): SipParseError {
    this.store = EMPTY;
    this.start = this.end = 0;
    this.pending = undefined;
    return new SipParseError(reason, { fatal: true });
  }
}
