import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import type { Logger } from '../../core/logger.js';
import { retryableStatus, SpeechProviderError, type SttOptions, type SttProvider, type SttStream, type Transcript } from './speech-provider.js';

export interface DeepgramOptions {
  readonly apiKey: string;
  /** Default `wss://api.deepgram.com`; tests point it at the loopback fake. */
  readonly baseUrl?: string;
  readonly model?: string;
  readonly connectTimeoutMs?: number;
  /** Where problems that do not end the stream are reported (a malformed message); errors that do are thrown with their cause. */
  readonly logger?: Logger;
}

/** Deepgram's own words for a refused handshake (its JSON `err_code`/`err_msg`), kept as the error's cause. */
export class DeepgramRefusal extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail || 'no reason given');
    this.name = 'DeepgramRefusal';
  }
}

/** At most this much of a refusal body is read: Deepgram's error JSON is a few hundred bytes. */
const MAX_REFUSAL_BYTES = 2048;

interface DeepgramResults {
  readonly type: 'Results';
  readonly is_final?: boolean;
  readonly speech_final?: boolean;
  readonly channel?: { readonly alternatives?: readonly { readonly transcript?: string; readonly confidence?: number }[] };
}

/**
 * Deepgram live STT over WebSocket (`GET /v1/listen`): query parameters carry the audio format
 * (linear16, 8000 Hz, mono), language, interim results and key terms; the key goes in an
 * `Authorization: Token` header, binary frames carry audio, `{"type":"CloseStream"}` asks for
 * the last results, after which the server closes. Finals are concatenated into the utterance.
 */
export class DeepgramStt implements SttProvider {
  readonly name = 'deepgram';

  constructor(private readonly options: DeepgramOptions) {}

  async open({ language, keywords, signal }: SttOptions): Promise<SttStream> {
    const url = new URL('/v1/listen', this.options.baseUrl ?? 'wss://api.deepgram.com');
    const q = url.searchParams;
    q.set('model', this.options.model ?? 'nova-3');
    q.set('encoding', 'linear16');
    q.set('sample_rate', '8000');
    q.set('channels', '1');
    q.set('language', language);
    q.set('interim_results', 'true');
    q.set('punctuate', 'true');
    for (const k of keywords) q.append('keyterm', k);
    const ws = new WebSocket(url, { headers: { Authorization: `Token ${this.options.apiKey}` }, handshakeTimeout: this.options.connectTimeoutMs ?? 3000 });
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        ws.terminate();
        reject(new SpeechProviderError(this.name, 'cancelled', false));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      ws.once('open', () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
      ws.once('unexpected-response', (_req, res) => {
        signal.removeEventListener('abort', onAbort);
        const status = res.statusCode ?? 0;
        void refusalDetail(res).then((detail) => {
          ws.terminate();
          // The detail goes in the message too: provider fallbacks log the message of the error they skip.
          reject(new SpeechProviderError(this.name, `handshake refused with HTTP ${status}${detail ? ` (${detail})` : ''}`, retryableStatus(status), new DeepgramRefusal(status, detail)));
        });
      });
      ws.once('error', (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(new SpeechProviderError(this.name, `connection failed: ${error.message}`, true, error));
      });
    });
    return new DeepgramStream(ws, signal, this.options.logger);
  }
}

/**
 * The reason in a refusal body: Deepgram answers `{"err_code": ..., "err_msg": ...}`; anything else
 * is cut to a line of printable text. The body is the server's words, never our key.
 */
function refusalDetail(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    let settled = false;
    const done = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      res.destroy();
      resolve(summarise(body));
    };
    // A server that never ends its refusal body must not hold the caller's turn.
    const timer = setTimeout(done, 1000);
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      body += chunk;
      if (body.length >= MAX_REFUSAL_BYTES) done();
    });
    res.once('end', done);
    res.once('error', done);
    res.once('close', done);
  });
}

function summarise(body: string): string {
  try {
    const parsed = JSON.parse(body) as { err_code?: unknown; err_msg?: unknown; reason?: unknown };
    const parts = [parsed.err_code, parsed.err_msg ?? parsed.reason].filter((p): p is string => typeof p === 'string' && p.length > 0);
    if (parts.length > 0) return parts.join(': ').slice(0, 300);
  } catch {
    // Not JSON: fall back to the text itself.
  }
  return body.replace(/[^\x20-\x7e]+/g, ' ').trim().slice(0, 300);
}

class DeepgramStream implements SttStream {
  private readonly finals: string[] = [];
  private readonly listeners: ((t: Transcript) => void)[] = [];
  private readonly closed: Promise<{ code: number; reason: string }>;
  private failure: SpeechProviderError | undefined;

  /** A malformed message is reported once per stream: a broken server would otherwise flood the log. */
  private malformedReported = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly signal: AbortSignal,
    private readonly logger: Logger | undefined,
  ) {
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on('error', (error) => (this.failure = new SpeechProviderError('deepgram', error.message, true, error)));
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let msg: DeepgramResults | { type?: string };
      try {
        msg = JSON.parse(data.toString()) as DeepgramResults | { type?: string };
      } catch (error) {
        // One unreadable message loses at most an interim result: report it, keep the stream.
        if (!this.malformedReported) {
          this.malformedReported = true;
          this.logger?.warn({ err: error, provider: 'deepgram', bytes: Buffer.isBuffer(data) ? data.length : undefined }, 'speech-to-text message is not JSON: ignored');
        }
        return;
      }
      if (msg.type !== 'Results') return;
      const result = msg as DeepgramResults;
      const alt = result.channel?.alternatives?.[0];
      const text = alt?.transcript?.trim() ?? '';
      const final = result.is_final === true;
      if (final && text) this.finals.push(text);
      if (text) for (const l of this.listeners) l({ text, final, ...(alt?.confidence !== undefined ? { confidence: alt.confidence } : {}) });
    });
    signal.addEventListener('abort', () => this.abort(), { once: true });
  }

  push(samples: Int16Array): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength));
  }

  onTranscript(listener: (t: Transcript) => void): void {
    this.listeners.push(listener);
  }

  abort(): void {
    this.ws.terminate();
  }

  async finish(): Promise<string> {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'CloseStream' }));
    const timer = setTimeout(() => this.ws.terminate(), 5000);
    const { code, reason } = await this.closed;
    clearTimeout(timer);
    if (this.signal.aborted) return '';
    if (this.failure) throw this.failure;
    if (code !== 1000 && code !== 1005) throw new SpeechProviderError('deepgram', `closed ${code} ${reason}`, code === 1011 || code === 1006);
    return this.finals.join(' ');
  }
}
