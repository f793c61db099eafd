import WebSocket from 'ws';
import { retryableStatus, SpeechProviderError, type SttOptions, type SttProvider, type SttStream, type Transcript } from './speech-provider.js';

export interface DeepgramOptions {
  readonly apiKey: string;
  /** Default `wss://api.deepgram.com`; tests point it at the loopback fake. */
  readonly baseUrl?: string;
  readonly model?: string;
  readonly connectTimeoutMs?: number;
}

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
        res.resume();
        ws.terminate();
        reject(new SpeechProviderError(this.name, `handshake refused with HTTP ${status}`, retryableStatus(status)));
      });
      ws.once('error', (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(new SpeechProviderError(this.name, `connection failed: ${error.message}`, true, error));
      });
    });
    return new DeepgramStream(ws, signal);
  }
}

class DeepgramStream implements SttStream {
  private readonly finals: string[] = [];
  private readonly listeners: ((t: Transcript) => void)[] = [];
  private readonly closed: Promise<{ code: number; reason: string }>;
  private failure: SpeechProviderError | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly signal: AbortSignal,
  ) {
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on('error', (error) => (this.failure = new SpeechProviderError('deepgram', error.message, true, error)));
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let msg: DeepgramResults | { type?: string };
      try {
        msg = JSON.parse(data.toString()) as DeepgramResults | { type?: string };
      } catch {
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
