import { once } from 'node:events';
import rtpengineClient from 'rtpengine-client';
import type { NgMessage, NgValue } from 'rtpengine-client';
import { AppError } from '../../core/errors.js';

/**
 * Control of rtpengine over its ng protocol (bencoded dictionaries over UDP, each request
 * prefixed by a cookie). Transport and bencode come from the `rtpengine-client` package; this
 * wrapper adds types, timeouts with retransmission (rtpengine answers a repeated cookie from its
 * cache, and offer/answer/delete are idempotent per call-id and tags anyway) and typed errors.
 */

export interface RtpengineOptions {
  /** The `--listen-ng` address of the daemon. */
  readonly host: string;
  readonly port: number;
  /** Per attempt; the request is retried `retries` more times after a timeout. */
  readonly timeoutMs?: number;
  readonly retries?: number;
  readonly localAddress?: string;
}

export interface OfferAnswerParams {
  readonly callId: string;
  readonly fromTag: string;
  readonly sdp: string;
  /** e.g. `trust-address`, `inject DTMF`, `symmetric`. */
  readonly flags?: readonly string[];
  /** e.g. `origin`, `session-connection`. */
  readonly replace?: readonly string[];
  /** `remove`, `force`, ... */
  readonly ice?: string;
  readonly transportProtocol?: string;
  /** Where each leg lives, for multi-interface setups. */
  readonly direction?: readonly [string, string];
}

export interface RtpengineStream {
  readonly tag: string;
  readonly packets: number;
  readonly bytes: number;
}

export class RtpengineError extends AppError {
  constructor(command: string, reason: string, retryable: boolean) {
    super(retryable ? 'unavailable' : 'failed_precondition', `rtpengine ${command}: ${reason}`, { retryable });
    this.name = 'RtpengineError';
  }
}

type Command = 'ping' | 'offer' | 'answer' | 'delete' | 'query' | 'playDTMF' | 'playMedia';

const text = (v: NgValue | undefined): string => (Buffer.isBuffer(v) ? v.toString('utf8') : typeof v === 'string' || typeof v === 'number' ? String(v) : '');
const num = (v: NgValue | undefined): number => (typeof v === 'number' ? v : Number(text(v)) || 0);
const dict = (v: NgValue | undefined): NgMessage => (v && typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v) ? v : {});

export class RtpengineClient {
  private constructor(
    private readonly client: rtpengineClient.Client,
    private readonly options: RtpengineOptions,
  ) {}

  static async connect(options: RtpengineOptions): Promise<RtpengineClient> {
    const client = new rtpengineClient.Client({ localAddress: options.localAddress ?? '127.0.0.1', timeout: options.timeoutMs ?? 1000 });
    // The package emits 'error' for late replies to requests that already timed out: keep them harmless.
    client.on('error', () => undefined);
    await once(client, 'listening');
    return new RtpengineClient(client, options);
  }

  async ping(): Promise<void> {
    const reply = await this.request('ping', {});
    if (text(reply.result) !== 'pong') throw new RtpengineError('ping', `unexpected reply ${text(reply.result)}`, true);
  }

  /** Returns rtpengine's rewritten SDP to forward to the callee. */
  async offer(params: OfferAnswerParams): Promise<string> {
    const reply = await this.request('offer', { ...this.common(params), sdp: params.sdp });
    return text(reply.sdp);
  }

  /** `toTag` is the callee's tag; returns the SDP to forward to the caller. */
  async answer(params: OfferAnswerParams & { readonly toTag: string }): Promise<string> {
    const reply = await this.request('answer', { ...this.common(params), 'to-tag': params.toTag, sdp: params.sdp });
    return text(reply.sdp);
  }

  /** `delayS` overrides the daemon's delete delay (it keeps a deleted call around for 30 s by default). */
  async delete(callId: string, options: { readonly fromTag?: string; readonly delayS?: number } = {}): Promise<void> {
    await this.request('delete', {
      'call-id': callId,
      ...(options.fromTag ? { 'from-tag': options.fromTag } : {}),
      ...(options.delayS !== undefined ? { 'delete-delay': options.delayS } : {}),
    });
  }

  /** Packet counters per tag (monologue) of a call. */
  async query(callId: string): Promise<RtpengineStream[]> {
    const reply = await this.request('query', { 'call-id': callId });
    return Object.entries(dict(reply.tags)).map(([tag, value]) => {
      let packets = 0;
      let bytes = 0;
      const medias = dict(value).medias;
      for (const media of Array.isArray(medias) ? medias : []) {
        const streams = dict(media).streams;
        for (const stream of Array.isArray(streams) ? streams : []) {
          const stats = dict(dict(stream).stats);
          packets += num(stats.packets);
          bytes += num(stats.bytes);
        }
      }
      return { tag, packets, bytes };
    });
  }

  /** Injects a DTMF digit as the `fromTag` party (needs `inject DTMF` at offer/answer). */
  async playDtmf(callId: string, fromTag: string, digit: string, durationMs = 100): Promise<void> {
    await this.request('playDTMF', { 'call-id': callId, 'from-tag': fromTag, code: digit, duration: durationMs });
  }

  /** Plays an audio file (path on the daemon's host) to the `fromTag` party; returns its duration in ms. */
  async playMedia(callId: string, fromTag: string, file: string): Promise<number> {
    const reply = await this.request('playMedia', { 'call-id': callId, 'from-tag': fromTag, file });
    return num(reply.duration);
  }

  close(): void {
    this.client.close();
  }

  private common(params: OfferAnswerParams): NgMessage {
    return {
      'call-id': params.callId,
      'from-tag': params.fromTag,
      ...(params.flags ? { flags: [...params.flags] } : {}),
      ...(params.replace ? { replace: [...params.replace] } : {}),
      ...(params.ice ? { ICE: params.ice } : {}),
      ...(params.transportProtocol ? { 'transport-protocol': params.transportProtocol } : {}),
      ...(params.direction ? { direction: [...params.direction] } : {}),
    };
  }

  private async request(command: Command, message: NgMessage): Promise<NgMessage> {
    const attempts = 1 + (this.options.retries ?? 2);
    let lastError: unknown;
    for (let attempt = 0; attempt < attempts; attempt++) {
      let reply: NgMessage;
      try {
        reply = await this.send(command, message);
      } catch (error) {
        lastError = error;
        continue;
      }
      const result = text(reply.result);
      if (result === 'error') throw new RtpengineError(command, text(reply['error-reason']) || 'error', false);
      return reply;
    }
    throw new RtpengineError(command, `no reply from ${this.options.host}:${this.options.port} (${String(lastError)})`, true);
  }

  private send(command: Command, message: NgMessage): Promise<NgMessage> {
    const { port, host } = this.options;
    switch (command) {
      case 'ping':
        return this.client.ping(port, host);
      case 'offer':
        return this.client.offer(port, host, message);
      case 'answer':
        return this.client.answer(port, host, message);
      case 'delete':
        return this.client.delete(port, host, message);
      case 'query':
        return this.client.query(port, host, message);
      case 'playDTMF':
        return this.client.playDTMF(port, host, message);
      case 'playMedia':
        return this.client.playMedia(port, host, message);
    }
  }
}
