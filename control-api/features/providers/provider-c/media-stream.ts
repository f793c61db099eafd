import type { StreamProtocol } from '../stream-protocol.js';
import { streamCodecs } from '../stream-protocol.js';
import { checkpointC, clearAudioC, parseFrameC, playAudioC } from './stream-frames.js';

/**
 * Provider C's stream. C's docs describe no credential on the stream handshake: the 144-bit token
 * in the path, handed out only in a signed answer, and a `start` whose callId is the call's stand
 * for it. The socket closing is the end of the call (C's stream has no `stop`; `keepCallAlive`
 * ties the call to the socket), except while a transfer has moved the call on.
 */
export const streamProtocolC: StreamProtocol = {
  provider: 'providerC',
  maxPayload: 256 * 1024,
  codec: streamCodecs.mulaw,
  framesPerChunk: 1,
  closeIsStop: true,
  streamIdField: 'streamId',
  // No credential on C's handshake: the unguessable token in the path is the check.
  admit: () => ({ ok: true }),
  parse: parseFrameC,
  outbound: { media: (_streamId, payload) => playAudioC(payload), mark: checkpointC, clear: clearAudioC },
};
