import { connect, type Socket } from 'node:net';

/** An HTTP/1.1 response read off a raw socket. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface RawUpload {
  /** Request line and headers, without the blank line. */
  readonly head: string;
  /** Body bytes, sent with Content-Length, or chunked when `chunked`. */
  readonly body: Buffer;
  readonly chunked?: boolean;
}

/**
 * A client as simple as many are: writes the whole request, and only once the upload is done (or
 * the connection broke) reads the answer. A server that answers early and closes with the
 * upload unread resets the connection, and such a client never sees the answer.
 */
export class RawHttpConnection {
  private received = Buffer.alloc(0);
  private closed = false;
  /** The server's FIN arrived ('end'): it closed the connection in order, not by a reset. */
  private ended = false;
  private error: Error | undefined;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
    });
    socket.on('error', (error) => {
      this.error = error;
    });
    socket.on('end', () => {
      this.ended = true;
    });
    socket.on('close', () => {
      this.closed = true;
    });
  }

  static open(port: number): Promise<RawHttpConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new RawHttpConnection(socket)));
      socket.once('error', reject);
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends one request; resolves once everything was written, rejects with the write error. */
  async send(upload: RawUpload): Promise<void> {
    const head = upload.chunked ? `${upload.head}\r\nTransfer-Encoding: chunked\r\n\r\n` : `${upload.head}\r\nContent-Length: ${upload.body.length}\r\n\r\n`;
    await this.write(Buffer.from(head, 'latin1'));
    for (let at = 0; at < upload.body.length; at += 64 * 1024) {
      const piece = upload.body.subarray(at, at + 64 * 1024);
      await this.write(upload.chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece);
    }
    if (upload.chunked) await this.write(Buffer.from('0\r\n\r\n'));
  }

  private write(data: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.error) return reject(this.error);
      this.socket.write(data, (error) => (error ? reject(error) : resolve()));
    });
  }

  /** The next complete response (Content-Length framed), or an error when the connection ends first. */
  async response(timeoutMs = 10_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = this.parse();
      if (parsed) return parsed;
      if (this.closed || this.error) throw new Error(`connection ended without a complete response (${this.error?.message ?? 'closed'}); got ${JSON.stringify(this.received.toString('latin1').slice(0, 200))}`);
      if (Date.now() > deadline) throw new Error('no response in time');
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private parse(): RawResponse | undefined {
    const end = this.received.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const lines = this.received.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(lines[0]!.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (this.received.length < end + 4 + length) return undefined;
    const body = this.received.subarray(end + 4, end + 4 + length).toString('utf8');
    this.received = this.received.subarray(end + 4 + length);
    return { status, headers, body };
  }

  /** Resolves once the server has closed the connection, or rejects after `timeoutMs`. */
  async closedWithin(timeoutMs: number): Promise<number> {
    const started = Date.now();
    while (!this.closed) {
      if (Date.now() - started > timeoutMs) throw new Error(`connection still open after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return Date.now() - started;
  }

  /**
   * Resolves once the server's FIN has arrived (the socket's 'end' event), or rejects after
   * `timeoutMs`, or at once when the connection closed without one (a reset).
   */
  async finWithin(timeoutMs: number): Promise<number> {
    const started = Date.now();
    while (!this.ended) {
      if (this.closed) throw new Error(`connection closed without a FIN (${this.error?.message ?? 'no error'})`);
      if (Date.now() - started > timeoutMs) throw new Error(`no FIN from the server after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return Date.now() - started;
  }

  /** Raw bytes for requests that are deliberately incomplete. */
  writeRaw(text: string): void {
    this.socket.write(text);
  }

  receivedText(): string {
    return this.received.toString('latin1');
  }

  destroy(): void {
    this.socket.destroy();
  }
}
