import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * A loopback Deepgram live-transcription server speaking the real wire protocol: WebSocket
 * upgrade on `/v1/listen` with `Authorization: Token <key>` (401 otherwise), binary audio frames,
 * interim `Results` while audio flows, a final `Results` + `Metadata` after `{"type":"CloseStream"}`,
 * then a normal close. What it "hears" is decided by the test (`transcriptFor`). It can refuse
 * upgrades (`refuseWith`) or drop a stream mid-utterance with a WebSocket close code, as the
 * service does (1011 for its own errors, 1008 for data it will not take; RFC 6455 sec. 7.4.1).
 */
export interface FakeDeepgramOptions {
  readonly apiKey: string;
  /** The words for an utterance of `bytes` bytes of linear16 audio. */
  readonly transcriptFor: (bytes: number, query: URLSearchParams) => string;
  /** Answer the upgrade with this HTTP status instead (429, 503 ... to test fallback). */
  readonly refuseWith?: number;
  /** Before the final results, send this many text frames that are not JSON (a broken service). */
  readonly malformedFrames?: number;
}

/** Close a stream once it has received `afterBytes` of audio, with this close code and reason. */
export interface MidStreamFailure {
  readonly afterBytes: number;
  readonly code: number;
  readonly reason: string;
}

export interface FakeDeepgram {
  readonly url: string;
  /** Query strings of accepted connections. */
  readonly connections: URLSearchParams[];
  /** Bytes of audio received per connection. */
  readonly audioBytes: number[];
  /** Upgrade attempts with the right key, refused or not. */
  attempts: number;
  /** While set, upgrades with the right key are answered with this HTTP status. */
  refuseWith: number | undefined;
  /** While set, accepted streams are closed mid-utterance. */
  failMidStream: MidStreamFailure | undefined;
  close(): Promise<void>;
}

export async function startFakeDeepgram(options: FakeDeepgramOptions): Promise<FakeDeepgram> {
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  const connections: URLSearchParams[] = [];
  const audioBytes: number[] = [];
  const state = { attempts: 0, refuseWith: options.refuseWith, failMidStream: undefined as MidStreamFailure | undefined };
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const refuse = (status: number, text: string): void => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"err_code":"${text}"}`);
    };
    if (url.pathname !== '/v1/listen') return refuse(404, 'Not Found');
    if (req.headers.authorization !== `Token ${options.apiKey}`) return refuse(401, 'Unauthorized');
    state.attempts++;
    if (state.refuseWith) return refuse(state.refuseWith, 'Refused');
    if (url.searchParams.get('encoding') !== 'linear16' || url.searchParams.get('sample_rate') !== '8000') return refuse(400, 'Bad Request');
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, url.searchParams));
  });
  function serve(ws: WebSocket, query: URLSearchParams): void {
    const index = connections.push(query) - 1;
    audioBytes[index] = 0;
    let sinceInterim = 0;
    const results = (final: boolean): string => {
      const transcript = options.transcriptFor(audioBytes[index]!, query);
      const words = final ? transcript : transcript.split(' ').slice(0, Math.max(1, Math.floor(transcript.split(' ').length / 2))).join(' ');
      return JSON.stringify({
        type: 'Results',
        channel_index: [0, 1],
        duration: audioBytes[index]! / 16000,
        start: 0,
        is_final: final,
        speech_final: final,
        channel: { alternatives: [{ transcript: words, confidence: 0.98, words: [] }] },
      });
    };
    const failure = state.failMidStream;
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        const n = (data as Buffer).length;
        audioBytes[index]! += n;
        if (failure && audioBytes[index]! >= failure.afterBytes && ws.readyState === ws.OPEN) {
          ws.close(failure.code, failure.reason);
          return;
        }
        sinceInterim += n;
        // An interim result about every 200 ms of audio, as the service does.
        if (sinceInterim >= 3200) {
          sinceInterim = 0;
          ws.send(results(false));
        }
        return;
      }
      const msg = JSON.parse(data.toString()) as { type?: string };
      if (msg.type === 'CloseStream') {
        for (let i = 0; i < (options.malformedFrames ?? 0); i++) ws.send('<html>502 Bad Gateway</html>');
        ws.send(results(true));
        ws.send(JSON.stringify({ type: 'Metadata', request_id: `fake-${index}`, duration: audioBytes[index]! / 16000, channels: 1 }));
        ws.close(1000);
      }
    });
  }
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `ws://127.0.0.1:${port}`,
    connections,
    audioBytes,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
