import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Logger } from '../../../../core/logger.js';
import { pcmu } from '../../../../media/codecs/g711.js';
import type { StreamTransport } from '../../../../media/stream/stream-media-session.js';
import type { ProviderCallEntry, ProviderCalls } from '../provider-calls.js';
import { refuseUpgrade } from '../provider-http.js';
import type { AttachedStream, StreamCall } from '../stream-call.js';
import { accountA } from './account.js';
import { clearFrameA, markFrameA, mediaFrameA, parseFrameA } from './stream-frames.js';
import { signatureHeaderA, validSignatureA } from './signature.js';

export interface MediaStreamAOptions {
  readonly calls: ProviderCalls;
  readonly logger: Logger;
  /** The `start` frame must come this soon after the socket opened. */
  readonly startTimeoutMs: number;
  /** The wss:// URL we gave the provider for this call's stream (what it signs in the handshake). */
  readonly streamUrl: (token: string) => string;
}

/** RFC 6455 sec. 7.4.1: 1003 data of a type we cannot accept, 1007 data inconsistent with the message type, 1008 policy. */
const UNSUPPORTED = 1003;
const INVALID = 1007;
const POLICY = 1008;

/**
 * Provider A's bidirectional media stream endpoint. The handshake must come for a call we set up
 * (the token in the path) and carry the provider's signature of the stream URL; then `connected`
 * and `start` (the call's account and call id, 8 kHz mono mu-law), and from then on caller audio,
 * keys and mark echoes go to the call's media session while agent audio, marks and clears go
 * back as the provider's frames. A `stop` means the provider ended the stream (the caller hung up,
 * or a transfer replaced it); a socket closed without one is a lost stream the provider may
 * reconnect. A frame the protocol does not allow ends the call cleanly with the reason logged.
 */
export class MediaStreamA {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 256 * 1024 });

  constructor(private readonly o: MediaStreamAOptions) {}

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, token: string): void {
    const entry = this.o.calls.get(token);
    const account = accountA(entry);
    if (!entry || !account) return refuseUpgrade(socket, 404, 'no call waits for a media stream here');
    const signature = req.headers[signatureHeaderA];
    if (!validSignatureA(account.authToken, Array.isArray(signature) ? signature[0] : signature, this.o.streamUrl(token))) {
      this.o.logger.warn({ provider: 'providerA', callSid: entry.callSid }, 'media stream handshake refused: signature does not match');
      return refuseUpgrade(socket, 403, 'the request signature does not match');
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.serve(ws, entry, account.accountSid, req.socket.remoteAddress ?? ''));
  }

  /** Closes every stream (shutdown; the calls have been hung up first). */
  close(): void {
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
  }

  private serve(ws: WebSocket, entry: ProviderCallEntry, accountSid: string, remoteAddress: string): void {
    const log = this.o.logger.child({ provider: 'providerA', callSid: entry.callSid });
    let streamSid: string | undefined;
    let call: StreamCall | undefined;
    let stopped = false;
    const unknownEvents = new Set<string>();
    const transport: StreamTransport = {
      sendAudio: (frame) => send(mediaFrameA(streamSid as string, encoded(frame))),
      sendMark: (name) => send(markFrameA(streamSid as string, name)),
      sendClear: () => send(clearFrameA(streamSid as string)),
    };
    const send = (text: string): void => {
      if (ws.readyState === ws.OPEN) ws.send(text);
    };
    const attached: AttachedStream = { transport, close: (code, reason) => ws.readyState <= ws.OPEN && ws.close(code, reason.slice(0, 120)) };
    const startTimer = setTimeout(() => fail(POLICY, `no start frame within ${this.o.startTimeoutMs} ms`), this.o.startTimeoutMs);

    /** A protocol violation: before `start` the call is given up, after it the call ends cleanly. */
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
      const frame = parseFrameA(rawText(data));
      switch (frame.kind) {
        case 'malformed':
          return fail(INVALID, frame.problem);
        case 'unknown':
          if (!unknownEvents.has(frame.event)) log.debug({ event: frame.event }, 'media stream event not handled: ignored');
          unknownEvents.add(frame.event);
          return;
        case 'connected':
          return;
        case 'start': {
          if (streamSid) return fail(INVALID, 'a second start frame');
          const { start } = frame.frame;
          if (start.accountSid !== accountSid) return fail(POLICY, 'start: the stream is for another account');
          if (entry.callSid && start.callSid !== entry.callSid) return fail(POLICY, 'start: the stream is for another call');
          const format = start.mediaFormat;
          if (format.encoding !== 'audio/x-mulaw' || format.sampleRate !== 8000 || format.channels !== 1) {
            return fail(UNSUPPORTED, `start: media format ${format.encoding} ${format.sampleRate} Hz x${format.channels} (8000 Hz mono audio/x-mulaw expected)`);
          }
          clearTimeout(startTimer);
          streamSid = frame.frame.streamSid;
          entry.callSid ??= start.callSid;
          call = this.o.calls.streamStarted(entry, attached, remoteAddress, 'providerA-stream');
          return;
        }
        case 'media':
        case 'dtmf':
        case 'mark':
        case 'stop': {
          if (!call || !streamSid) return fail(INVALID, `${frame.kind} before start`);
          if (frame.streamSid !== streamSid) return fail(INVALID, `${frame.kind}: streamSid ${frame.streamSid} is not this stream's`);
          if (frame.kind === 'media') call.media.receiveAudio(pcmu.decode(Buffer.from(frame.payload, 'base64')));
          else if (frame.kind === 'dtmf') call.media.receiveDtmf(frame.digit);
          else if (frame.kind === 'mark') call.media.receiveMark(frame.name);
          else {
            stopped = true;
            call.streamStopped(attached);
            ws.close(1000, 'stopped');
          }
          return;
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

/** Agent audio as the provider takes it: 8 kHz mu-law bytes. */
function encoded(frame: Int16Array): Buffer {
  const out = Buffer.allocUnsafe(frame.length);
  pcmu.encode(frame, out);
  return out;
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as Buffer).toString('utf8');
}
