import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Logger } from '../../../../core/logger.js';
import { pcmu } from '../../../../media/codecs/g711.js';
import type { StreamTransport } from '../../../../media/stream/stream-media-session.js';
import type { ProviderCallEntry, ProviderCalls } from '../provider-calls.js';
import { refuseUpgrade } from '../provider-http.js';
import type { AttachedStream, StreamCall } from '../stream-call.js';
import { accountC } from './account.js';
import { checkpointC, clearAudioC, parseFrameC, playAudioC } from './stream-frames.js';

export interface MediaStreamCOptions {
  readonly calls: ProviderCalls;
  readonly logger: Logger;
  readonly startTimeoutMs: number;
}

const UNSUPPORTED = 1003;
const INVALID = 1007;
const POLICY = 1008;

/**
 * Provider C's stream endpoint. C's docs describe no credential on the stream handshake: the
 * 144-bit token in the path, handed out only in a signed answer, and a `start` whose callId is
 * the call's stand for it. The socket closing is the end of the call (C's stream has no `stop`;
 * `keepCallAlive` ties the call to the socket), except while a transfer has moved the call on.
 */
export class MediaStreamC {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 256 * 1024 });

  constructor(private readonly o: MediaStreamCOptions) {}

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, token: string): void {
    const entry = this.o.calls.get(token);
    if (!entry || !accountC(entry)) return refuseUpgrade(socket, 404, 'no call waits for a media stream here');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.serve(ws, entry, req.socket.remoteAddress ?? ''));
  }

  close(): void {
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
  }

  private serve(ws: WebSocket, entry: ProviderCallEntry, remoteAddress: string): void {
    const log = this.o.logger.child({ provider: 'providerC', callSid: entry.callSid });
    let streamId: string | undefined;
    let call: StreamCall | undefined;
    const send = (text: string): void => {
      if (ws.readyState === ws.OPEN) ws.send(text);
    };
    const transport: StreamTransport = {
      sendAudio: (frame) => {
        const bytes = Buffer.allocUnsafe(frame.length);
        pcmu.encode(frame, bytes);
        send(playAudioC(bytes));
      },
      sendMark: (name) => send(checkpointC(streamId as string, name)),
      sendClear: () => send(clearAudioC(streamId as string)),
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
      const frame = parseFrameC(Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8'));
      if (frame.kind === 'malformed') return fail(INVALID, frame.problem);
      if (frame.kind === 'unknown') return;
      if (frame.kind === 'start') {
        if (streamId) return fail(INVALID, 'a second start frame');
        if (entry.callSid && frame.callId !== entry.callSid) return fail(POLICY, 'start: the stream is for another call');
        if (frame.encoding !== 'audio/x-mulaw' || frame.sampleRate !== 8000) return fail(UNSUPPORTED, `start: media format ${frame.encoding} ${frame.sampleRate} Hz (8000 Hz audio/x-mulaw expected)`);
        clearTimeout(startTimer);
        streamId = frame.streamId;
        entry.callSid ??= frame.callId;
        call = this.o.calls.streamStarted(entry, attached, remoteAddress, 'providerC-stream');
        return;
      }
      if (!call || !streamId) return fail(INVALID, `${frame.kind} before start`);
      if (frame.streamId !== streamId) return fail(INVALID, `${frame.kind}: streamId ${frame.streamId} is not this stream's`);
      if (frame.kind === 'media') call.media.receiveAudio(pcmu.decode(Buffer.from(frame.payload, 'base64')));
      else if (frame.kind === 'dtmf') call.media.receiveDtmf(frame.digit);
      else if (frame.kind === 'played') call.media.receiveMark(frame.name);
    });
    ws.on('error', (error) => fail(POLICY, `socket error: ${error.message}`));
    ws.on('close', () => {
      clearTimeout(startTimer);
      // No stop frame in C's protocol: the socket closing is the call ending.
      if (call) call.streamStopped(attached);
      else this.o.calls.giveUp(entry, 'the media stream closed before it started');
    });
  }
}
