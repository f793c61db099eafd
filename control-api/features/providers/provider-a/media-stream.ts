import type { StreamProtocol } from '../stream-protocol.js';
import { streamCodecs } from '../stream-protocol.js';
import { accountA } from './account.js';
import { signatureHeaderA, validSignatureA } from './signature.js';
import { clearFrameA, markFrameA, mediaFrameA, parseFrameA } from './stream-frames.js';

/**
 * Provider A's media stream: the handshake carries the provider's signature of the stream URL we
 * gave it (`streamUrl`); frames are camelCase JSON with 8 kHz mono mu-law, one 20 ms frame each;
 * `stop` ends the stream (the caller hung up, or a transfer replaced it).
 */
export function streamProtocolA(streamUrl: (token: string) => string): StreamProtocol {
  return {
    provider: 'providerA',
    maxPayload: 256 * 1024,
    codec: streamCodecs.mulaw,
    framesPerChunk: 1,
    closeIsStop: false,
    streamIdField: 'streamSid',
    admit(entry, req) {
      const account = accountA(entry);
      const signature = req.headers[signatureHeaderA];
      if (!account || !validSignatureA(account.authToken, Array.isArray(signature) ? signature[0] : signature, streamUrl(entry.token))) {
        return { ok: false, reason: 'the request signature does not match' };
      }
      return { ok: true, accountId: account.accountSid };
    },
    parse: parseFrameA,
    outbound: { media: mediaFrameA, mark: markFrameA, clear: clearFrameA },
  };
}
