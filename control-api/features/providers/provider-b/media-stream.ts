import type { StreamProtocol } from '../stream-protocol.js';
import { streamCodecs } from '../stream-protocol.js';
import { accountB, validBasicAuthB } from './account.js';
import { clearFrameB, markFrameB, mediaFrameB, parseFrameB } from './stream-frames.js';

/**
 * Provider B's Voicebot stream: the handshake carries the number's API key and token as HTTP Basic
 * auth; frames are snake_case JSON with 8 kHz 16-bit little-endian PCM, caller audio in ~100 ms
 * chunks; agent audio goes back in chunks of at least 100 ms (five 20 ms frames of 320 bytes).
 */
export const streamProtocolB: StreamProtocol = {
  provider: 'providerB',
  maxPayload: 512 * 1024,
  codec: streamCodecs.linear16,
  framesPerChunk: 5,
  closeIsStop: false,
  streamIdField: 'stream_sid',
  admit(entry, req) {
    const account = accountB(entry);
    if (!account || !validBasicAuthB(account, req.headers.authorization)) return { ok: false, reason: 'the API key and token do not match' };
    return { ok: true, accountId: account.accountSid };
  },
  parse: parseFrameB,
  outbound: { media: mediaFrameB, mark: markFrameB, clear: clearFrameB },
};
