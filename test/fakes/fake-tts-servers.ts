import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Loopback fakes of two streaming TTS HTTP APIs, speaking their real request/response shapes:
 * ElevenLabs `POST /v1/text-to-speech/{voice}/stream?output_format=ulaw_8000` (`xi-api-key`,
 * JSON body, chunked mu-law) and Azure `POST /cognitiveservices/v1` (`Ocp-Apim-Subscription-Key`,
 * SSML body, `X-Microsoft-OutputFormat`, chunked raw PCM). The audio is a tone whose length
 * follows the text (80 ms per character), sent in 100 ms chunks with a small pause between them.
 * `cutAfterBytes` breaks a response mid-stream (the connection is destroyed), as a proxy or a
 * crashing synthesiser would.
 */
export interface FakeTtsRequest {
  readonly provider: 'elevenlabs' | 'azure';
  readonly voice: string;
  readonly text: string;
  readonly format: string;
}

export interface FakeTtsServer {
  readonly url: string;
  readonly requests: FakeTtsRequest[];
  /** Answer every request with this status (503, 429, 401 ...) while set. */
  failWith: number | undefined;
  /** While set, every audio response is cut (socket destroyed) after this many bytes. */
  cutAfterBytes: number | undefined;
  close(): Promise<void>;
}

const readBody = async (req: IncomingMessage): Promise<string> => {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return body;
};

function toneBytes(provider: 'elevenlabs' | 'azure', ms: number): Buffer {
  const rate = provider === 'azure' ? 16000 : 8000;
  const n = Math.round((rate * ms) / 1000);
  if (provider === 'azure') {
    const out = Buffer.alloc(n * 2);
    for (let i = 0; i < n; i++) out.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 2 * i);
    return out;
  }
  // mu-law of a 440 Hz tone (G.711 encoding, ITU-T G.711 sec. 3).
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) {
    const x = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate));
    const sign = x < 0 ? 0x80 : 0;
    const mag = Math.min(32635, Math.abs(x)) + 132;
    let exp = 7;
    for (let mask = 0x4000; (mag & mask) === 0 && exp > 0; mask >>= 1) exp--;
    const mant = (mag >> (exp + 3)) & 0x0f;
    out[i] = ~(sign | (exp << 4) | mant) & 0xff;
  }
  return out;
}

export async function startFakeTtsServer(apiKey: string): Promise<FakeTtsServer> {
  const state: FakeTtsServer = { url: '', requests: [], failWith: undefined, cutAfterBytes: undefined, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const body = await readBody(req);
      let request: FakeTtsRequest | undefined;
      const eleven = /^\/v1\/text-to-speech\/([^/]+)\/stream$/.exec(url.pathname);
      if (req.method === 'POST' && eleven) {
        if (req.headers['xi-api-key'] !== apiKey) return res.writeHead(401, { 'content-type': 'application/json' }).end('{"detail":{"status":"invalid_api_key"}}');
        const json = JSON.parse(body) as { text?: string; model_id?: string };
        if (typeof json.text !== 'string') return res.writeHead(422).end('{"detail":"text required"}');
        request = { provider: 'elevenlabs', voice: decodeURIComponent(eleven[1]!), text: json.text, format: url.searchParams.get('output_format') ?? 'mp3_44100_128' };
      } else if (req.method === 'POST' && url.pathname === '/cognitiveservices/v1') {
        if (req.headers['ocp-apim-subscription-key'] !== apiKey) return res.writeHead(401).end();
        if (!String(req.headers['content-type']).startsWith('application/ssml+xml')) return res.writeHead(400).end();
        const voice = /<voice name="([^"]+)">([\s\S]*)<\/voice>/.exec(body);
        if (!voice) return res.writeHead(400).end();
        const text = voice[2]!.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
        request = { provider: 'azure', voice: voice[1]!, text, format: String(req.headers['x-microsoft-outputformat']) };
      } else {
        return res.writeHead(404).end();
      }
      state.requests.push(request);
      if (state.failWith) return res.writeHead(state.failWith).end('{"error":"fake failure"}');
      const supported = request.provider === 'elevenlabs' ? request.format === 'ulaw_8000' : request.format === 'raw-16khz-16bit-mono-pcm';
      if (!supported) return res.writeHead(400).end('unsupported format');
      res.writeHead(200, { 'content-type': request.provider === 'elevenlabs' ? 'audio/basic' : 'audio/x-wav', 'transfer-encoding': 'chunked' });
      const audio = toneBytes(request.provider, request.text.length * 80);
      const chunk = request.provider === 'azure' ? 3200 : 800;
      const cut = state.cutAfterBytes;
      for (let at = 0; at < audio.length && !res.destroyed; at += chunk) {
        if (cut !== undefined && at >= cut) {
          res.destroy();
          return;
        }
        res.write(audio.subarray(at, at + chunk));
        await new Promise((r) => setTimeout(r, 5));
      }
      res.end();
    })();
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  });
}
