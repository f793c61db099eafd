import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Logger } from '../../../../core/logger.js';
import type { StreamTransport } from '../../../../media/stream/stream-media-session.js';
import type { ProviderCallEntry, ProviderCalls } from '../provider-calls.js';
import { refuseUpgrade } from '../provider-http.js';
import type { AttachedStream, StreamCall } from '../stream-call.js';
import { accountB, validBasicAuthB } from './account.js';
import { clearFrameB, markFrameB, mediaFrameB, parseFrameB } from './stream-frames.js';

export interface MediaStreamBOptions {
  readonly calls: ProviderCalls;
  readonly logger: Logger;
  readonly startTimeoutMs: number;
}

const UNSUPPORTED = 1003;
const INVALID = 1007;
const POLICY = 1008;
/** Provider B wants agent audio in chunks of at least 100 ms (five 20 ms frames of 320 bytes). */
const FRAMES_PER_CHUNK = 5;

/**
 * Provider B's Voicebot stream endpoint: the handshake must come for a call we set up (token in
 * the path) with the number's API key and token as HTTP Basic auth; then `start` (the account,
 * 8 kHz 16-bit PCM), caller audio in ~100 ms chunks cut into 20 ms frames, keys (with duration),
 * mark echoes and `stop`; agent audio goes back in 100 ms chunks. Same failure rules as A: a
 * frame the protocol does not allow ends the call cleanly (1007 / 1003).
 */
export class MediaStreamB {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 512 * 1024 });

  constructor(private readonly o: MediaStreamBOptions) {}

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, token: string): void {
    const entry = this.o.calls.get(token);
    const account = accountB(entry);
    if (!entry || !account) return refuseUpgrade(socket, 404, 'no call waits for a media stream here');
    if (!validBasicAuthB(account, req.headers.authorization)) {
      this.o.logger.warn({ provider: 'providerB', callSid: entry.callSid }, 'media stream handshake refused: wrong or missing basic auth');
      return refuseUpgrade(socket, 403, 'the API key and token do not match');
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.serve(ws, entry, account.accountSid, req.socket.remoteAddress ?? ''));
  }

  close(): void {
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
  }

  private serve(ws: WebSocket, entry: ProviderCallEntry, accountSid: string, remoteAddress: string): void {
    const log = this.o.logger.child({ provider: 'providerB', callSid: entry.callSid });
    let streamSid: string | undefined;
    let call: StreamCall | undefined;
    let stopped = false;
    let pending: Int16Array[] = [];
    const send = (text: string): void => {
      if (ws.readyState === ws.OPEN) ws.send(text);
    };
    const flush = (): void => {
      if (pending.length === 0 || !streamSid) return;
      send(mediaFrameB(streamSid, pcm16le(pending)));
      pending = [];
    };
    const transport: StreamTransport = {
      sendAudio: (frame) => {
        pending.push(frame);
        if (pending.length >= FRAMES_PER_CHUNK) flush();
      },
      sendMark: (name) => {
        // A mark follows the audio before it: that audio must have gone first.
        flush();
        send(markFrameB(streamSid as string, name));
      },
      sendClear: () => {
        pending = [];
        send(clearFrameB(streamSid as string));
      },
      flush,
    };
    const attached: AttachedStream = { transport, close: (code, reason) => ws.readyState <= ws.OPEN && ws.close(code, reason.slice(0, 120)) };
    const startTimer = setTimeout(() => fail(POLICY, `no start frame within ${this.o.startTimeoutMs} ms`), this.o.startTimeoutMs);
    const fail = (code: number, problem: string): void => {
      clearTimeout(startTimer);
      if (call) call.streamFailed(attached, problem);
      else {
        log.error({ problem }, 'media stream protocol error before start: giving the call up');
        this.o.calls.giveUp(entry, `media stream error: ${problem}`);
      }
      if (ws.readyState <= ws.OPEN) ws.close(code, problem.slice(0, 120));
    };
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary) return fail(UNSUPPORTED, 'binary frame: the stream carries JSON text frames');
      const frame = parseFrameB(Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8'));
      switch (frame.kind) {
        case 'malformed':
          return fail(INVALID, frame.problem);
        case 'unknown':
        case 'connected':
          return;
        case 'start': {
          if (streamSid) return fail(INVALID, 'a second start frame');
          const { start } = frame.frame;
          if (start.account_sid !== accountSid) return fail(POLICY, 'start: the stream is for another account');
          if (entry.callSid && start.call_sid !== entry.callSid) return fail(POLICY, 'start: the stream is for another call');
          const format = start.media_format;
          if (format.encoding !== 'audio/x-raw' || format.sample_rate !== 8000 || (format.bit_rate !== undefined && format.bit_rate !== 16)) {
            return fail(UNSUPPORTED, `start: media format ${format.encoding} ${format.sample_rate} Hz (8000 Hz 16-bit audio/x-raw expected)`);
          }
          clearTimeout(startTimer);
          streamSid = frame.frame.stream_sid;
          entry.callSid ??= start.call_sid;
          call = this.o.calls.streamStarted(entry, attached, remoteAddress, 'providerB-stream');
          return;
        }
        default: {
          if (!call || !streamSid) return fail(INVALID, `${frame.kind} before start`);
          if (frame.streamSid !== streamSid) return fail(INVALID, `${frame.kind}: stream_sid ${frame.streamSid} is not this stream's`);
          if (frame.kind === 'media') {
            const bytes = Buffer.from(frame.payload, 'base64');
            if (bytes.length % 2 !== 0) return fail(INVALID, 'media: 16-bit PCM with an odd number of bytes');
            call.media.receiveAudio(fromPcm16le(bytes));
          } else if (frame.kind === 'dtmf') call.media.receiveDtmf(frame.digit, frame.durationMs);
          else if (frame.kind === 'mark') call.media.receiveMark(frame.name);
          else {
            stopped = true;
            call.streamStopped(attached);
            ws.close(1000, 'stopped');
          }
        }
      }
    });
    ws.on('error', (error) => fail(POLICY, `socket error: ${error.message}`));
    ws.on('close', (code) => {
      clearTimeout(startTimer);
      if (call && !stopped) call.streamLost(attached, `socket closed (${code}) without a stop frame`);
      else if (!call) this.o.calls.giveUp(entry, 'the media stream closed before it started');
    });
  }
}

/** 20 ms frames as one little-endian 16-bit PCM buffer (the provider's `audio/x-raw`). */
function pcm16le(frames: readonly Int16Array[]): Buffer {
  const out = Buffer.allocUnsafe(frames.reduce((n, f) => n + f.length * 2, 0));
  let at = 0;
  for (const f of frames) for (const s of f) at = out.writeInt16LE(s, at);
  return out;
}

function fromPcm16le(bytes: Buffer): Int16Array {
  const out = new Int16Array(bytes.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readInt16LE(i * 2);
  return out;
}
