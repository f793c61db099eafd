/**
 * The media-stream path of the voice-turn benchmark: each caller is a WebSocket client speaking
 * provider A's stream protocol (signed handshake, `connected`, `start`, a base64 mu-law `media`
 * frame every 20 ms, marks echoed at once) to the platform's real provider A stream endpoint
 * (StreamEndpoint with provider A's protocol -> ProviderCalls -> StreamMediaSession -> StreamCall); the agent side runs the
 * same null pipeline as the RTP path. No database: the calls are registered in memory.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { systemClock } from '../core/clock.js';
import { silentLogger } from '../core/logger.js';
import type { ActiveCall } from '../core/ports/call-handler.js';
import type { CallMediaSession } from '../core/ports/media.js';
import { streamProtocolA } from '../control-api/features/providers/provider-a/media-stream.js';
import { StreamEndpoint } from '../control-api/features/providers/stream-endpoint.js';
import { signatureA } from '../control-api/features/providers/provider-a/signature.js';
import { isRefusal, ProviderCalls } from '../control-api/features/providers/provider-calls.js';
import type { ProviderNumber } from '../control-api/features/providers/provider-numbers.js';
import { PacingScheduler } from '../media/rtp/pacing-scheduler.js';

export interface StreamConversation {
  /** Sends one 20 ms caller payload as a `media` frame. */
  readonly wire: (payload: Buffer) => void;
  /** Where agent audio received from the platform goes. */
  listen(onAudio: (payload: Buffer) => void): void;
  /** The agent side's media session (the StreamCall's), once the stream started. */
  readonly media: Promise<CallMediaSession>;
}

const authToken = 'bench-provider-a-token';
const accountSid = `AC${'0'.repeat(32)}`;

export async function openStreamConversations(convs: number): Promise<{ conversations: StreamConversation[]; close(): Promise<void> }> {
  const started = new Map<string, (call: ActiveCall) => void>();
  const calls = new ProviderCalls({
    clock: systemClock,
    logger: silentLogger,
    scheduler: new PacingScheduler(),
    handler: { handle: (call) => started.get(call.info.sipCallId)?.(call) },
    streamStartTimeoutMs: 30_000,
    reconnectGraceMs: 1_000,
    mediaTimeoutMs: 0,
    maxCallsPerNumber: 1_000_000,
    maxCallsPerTenant: 1_000_000,
  });
  const server = createServer((_req, res) => res.writeHead(404).end());
  let wsBase = '';
  const endpoint = new StreamEndpoint(streamProtocolA((token) => `${wsBase}/providers/a/calls/${token}/stream`), { prefix: '/providers/a', calls, logger: silentLogger, startTimeoutMs: 30_000 });
  server.on('upgrade', (req, socket, head) => endpoint.upgrade(req, socket, head));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  wsBase = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const number: ProviderNumber = { id: 'bench-number', tenantId: 'bench', e164: '+10000000000', enabled: true, recipeId: 'bench', language: 'en-US', maxCallDurationMinutes: 30, endCallOnSilenceMinutes: 0, account: { type: 'providerA', accountSid, authToken } };
  const sockets: WebSocket[] = [];
  const conversations: StreamConversation[] = [];
  for (let i = 0; i < convs; i++) {
    const callSid = `CA${String(i).padStart(32, '0')}`;
    const entry = calls.open({ provider: 'providerA', number, direction: 'inbound', ours: number.e164, remote: `+1999${i}`, callSid, dial: undefined }, () => ({ hangup: async () => undefined }));
    if (isRefusal(entry)) throw new Error(entry.reason);
    const media = new Promise<CallMediaSession>((resolve) => started.set(callSid, (call) => resolve(call.media)));
    const url = `${wsBase}/providers/a/calls/${entry.token}/stream`;
    const ws = new WebSocket(url, { headers: { 'X-Twilio-Signature': signatureA(authToken, url) } });
    sockets.push(ws);
    const streamSid = `MZ${String(i).padStart(32, '0')}`;
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
    ws.send(JSON.stringify({ event: 'start', sequenceNumber: '1', streamSid, start: { streamSid, accountSid, callSid, tracks: ['inbound'], customParameters: {}, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } }));
    let onAudio: (payload: Buffer) => void = () => undefined;
    let seq = 2;
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { event: string; media?: { payload: string }; mark?: { name: string } };
      if (msg.event === 'media' && msg.media) onAudio(Buffer.from(msg.media.payload, 'base64'));
      // No playout buffer on this side: a mark is "played" as soon as it arrives.
      else if (msg.event === 'mark' && msg.mark) ws.send(JSON.stringify({ event: 'mark', sequenceNumber: String(seq++), streamSid, mark: msg.mark }));
    });
    conversations.push({
      wire: (payload) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ event: 'media', sequenceNumber: String(seq++), streamSid, media: { track: 'inbound', payload: payload.toString('base64') } })),
      listen: (listener) => (onAudio = listener),
      media,
    });
  }
  return {
    conversations,
    close: async () => {
      for (const call of calls.live()) await call.hangup('bench-over');
      for (const ws of sockets) ws.terminate();
      endpoint.close();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
