import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Logger } from '../../../core/logger.js';
import type { StreamTransport } from '../../../media/stream/stream-media-session.js';
import type { ProviderCallEntry, ProviderCalls } from './provider-calls.js';
import { refuseUpgrade } from './provider-http.js';
import type { AttachedStream, StreamCall } from './stream-call.js';
import { formatProblem, type StreamProtocol } from './stream-protocol.js';

export interface StreamEndpointOptions {
  /** The provider's URL prefix: streams are at `<prefix>/calls/<token>/stream`. */
  readonly prefix: string;
  readonly calls: ProviderCalls;
  readonly logger: Logger;
  /** The `start` frame must come this soon after the socket opened. */
  readonly startTimeoutMs: number;
}

/** RFC 6455 sec. 7.4.1: 1003 data of a type we cannot accept, 1007 data inconsistent with the message type, 1008 policy. */
const UNSUPPORTED = 1003;
const INVALID = 1007;
const POLICY = 1008;

/**
 * A cloud provider's bidirectional media stream endpoint, for any provider's protocol. The
 * handshake must come for a call we set up (the token in the path) and pass the provider's own
 * check (a signature, Basic auth); then a `start` for that call in the codec's format (8 kHz mono),
 * and from then on caller audio, keys and mark echoes go to the call's media session while agent
 * audio, marks and clears go back as the provider's frames. A `stop` ends the stream; a socket
 * closed without one is a lost stream the provider may reconnect (or the end of the call, where
 * the protocol has no `stop`). A frame the protocol does not allow ends the call cleanly, the
 * reason logged.
 */
export class StreamEndpoint {
  private readonly wss: WebSocketServer;
  /** `<prefix>/calls/<token>/stream`. */
  private readonly streamPath: RegExp;

  constructor(
    private readonly protocol: StreamProtocol,
    private readonly o: StreamEndpointOptions,
  ) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload: protocol.maxPayload });
    this.streamPath = new RegExp(`^${o.prefix}/calls/([A-Za-z0-9_-]{1,64})/stream$`);
  }

  /** A WebSocket upgrade on the provider listener under this provider's prefix. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const token = this.streamPath.exec(new URL(req.url ?? '/', 'http://x').pathname)?.[1];
    if (token === undefined) return refuseUpgrade(socket, 404, 'no media stream endpoint here');
    const entry = this.o.calls.get(token);
    if (!entry || entry.provider !== this.protocol.provider) return refuseUpgrade(socket, 404, 'no call waits for a media stream here');
    const verdict = this.protocol.admit(entry, req);
    if (!verdict.ok) {
      this.o.logger.warn({ provider: this.protocol.provider, callSid: entry.callSid }, `media stream handshake refused: ${verdict.reason}`);
      return refuseUpgrade(socket, 403, verdict.reason);
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.serve(ws, entry, verdict.accountId, req.socket.remoteAddress ?? ''));
  }

  /** Closes every stream (shutdown; the calls have been hung up first). */
  close(): void {
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
  }

  private serve(ws: WebSocket, entry: ProviderCallEntry, accountId: string | undefined, remoteAddress: string): void {
    const { protocol } = this;
    const log = this.o.logger.child({ provider: protocol.provider, callSid: entry.callSid });
    let streamId: string | undefined;
    let call: StreamCall | undefined;
    let stopped = false;
    const unknownEvents = new Set<string>();
    const send = (text: string): void => {
      if (ws.readyState === ws.OPEN) ws.send(text);
    };
    const transport = outboundTransport(protocol, () => streamId, send);
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
      const frame = protocol.parse(rawText(data));
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
          if (streamId) return fail(INVALID, 'a second start frame');
          if (accountId !== undefined && frame.accountId !== accountId) return fail(POLICY, 'start: the stream is for another account');
          if (entry.callSid && frame.callId !== entry.callSid) return fail(POLICY, 'start: the stream is for another call');
          const unfit = formatProblem(frame.format, protocol.codec);
          if (unfit) return fail(UNSUPPORTED, unfit);
          clearTimeout(startTimer);
          streamId = frame.streamId;
          entry.callSid ??= frame.callId;
          call = this.o.calls.streamStarted(entry, attached, remoteAddress, `${protocol.provider}-stream`);
          return;
        }
        default: {
          if (!call || !streamId) return fail(INVALID, `${frame.kind} before start`);
          if (frame.streamId !== streamId) return fail(INVALID, `${frame.kind}: ${protocol.streamIdField} ${frame.streamId} is not this stream's`);
          if (frame.kind === 'media') {
            const audio = protocol.codec.decode(Buffer.from(frame.payload, 'base64'));
            if (typeof audio === 'string') return fail(INVALID, `media: ${audio}`);
            call.media.receiveAudio(audio);
          } else if (frame.kind === 'dtmf') call.media.receiveDtmf(frame.digit, frame.durationMs);
          else if (frame.kind === 'mark') call.media.receiveMark(frame.name);
          else if (frame.kind === 'stop') {
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
      if (!call) this.o.calls.giveUp(entry, 'the media stream closed before it started');
      else if (protocol.closeIsStop) call.streamStopped(attached);
      else if (!stopped) call.streamLost(attached, `socket closed (${code}) without a stop frame`);
    });
  }
}

/**
 * Agent audio, marks and clears as the provider's frames. Audio goes in chunks of the protocol's
 * size; a mark first sends the audio before it (that audio must have gone first), and a clear
 * drops what was not sent yet.
 */
function outboundTransport(protocol: StreamProtocol, streamId: () => string | undefined, send: (text: string) => void): StreamTransport {
  let pending: Int16Array[] = [];
  const flush = (): void => {
    const id = streamId();
    if (pending.length === 0 || id === undefined) return;
    send(protocol.outbound.media(id, protocol.codec.encode(pending)));
    pending = [];
  };
  return {
    sendAudio: (frame) => {
      pending.push(frame);
      if (pending.length >= protocol.framesPerChunk) flush();
    },
    sendMark: (name) => {
      flush();
      const id = streamId();
      if (id !== undefined) send(protocol.outbound.mark(id, name));
    },
    sendClear: () => {
      pending = [];
      const id = streamId();
      if (id !== undefined) send(protocol.outbound.clear(id));
    },
    flush,
  };
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as Buffer).toString('utf8');
}
