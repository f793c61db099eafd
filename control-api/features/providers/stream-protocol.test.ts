import assert from 'node:assert/strict';
import { z } from 'zod';
import { formatProblem, parseKnownFrame, streamCodecs } from './stream-protocol.js';
import { parseFrameA } from './provider-a/stream-frames.js';
import { parseFrameB } from './provider-b/stream-frames.js';
import { parseFrameC } from './provider-c/stream-frames.js';

describe('the providers\' stream protocol: one frame vocabulary and a codec table', () => {
  it('codes 16-bit PCM both ways and names odd-length bytes', () => {
    const frames = [Int16Array.from([0, 1, -1, 32767]), Int16Array.from([-32768])];
    const bytes = streamCodecs.linear16.encode(frames);
    assert.equal(bytes.length, 10);
    assert.deepEqual([...(streamCodecs.linear16.decode(bytes) as Int16Array)], [0, 1, -1, 32767, -32768]);
    assert.equal(streamCodecs.linear16.decode(Buffer.alloc(3)), '16-bit PCM with an odd number of bytes');
  });

  it('codes mu-law frames into one payload, in order', () => {
    const loud = Int16Array.from({ length: 160 }, (_, i) => (i % 2 ? 8000 : -8000));
    const quiet = new Int16Array(160);
    const bytes = streamCodecs.mulaw.encode([loud, quiet]);
    assert.equal(bytes.length, 320);
    const back = streamCodecs.mulaw.decode(bytes) as Int16Array;
    assert.ok(Math.abs((back[1] ?? 0) - 8000) < 300 && Math.abs((back[0] ?? 0) + 8000) < 300);
    assert.ok(back.subarray(160).every((s) => Math.abs(s) < 10));
  });

  it('accepts only 8 kHz mono in the codec\'s encoding, and says what was offered', () => {
    assert.equal(formatProblem({ encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 }, streamCodecs.mulaw), undefined);
    assert.equal(formatProblem({ encoding: 'audio/x-raw', sampleRate: 8000, bitsPerSample: 16 }, streamCodecs.linear16), undefined);
    assert.match(formatProblem({ encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 2 }, streamCodecs.mulaw) ?? '', /x2 \(8000 Hz mono audio\/x-mulaw expected\)/);
    assert.match(formatProblem({ encoding: 'audio/x-raw', sampleRate: 16000, bitsPerSample: 16 }, streamCodecs.linear16) ?? '', /16000 Hz/);
    assert.match(formatProblem({ encoding: 'audio/x-raw', sampleRate: 8000, bitsPerSample: 8 }, streamCodecs.linear16) ?? '', /8-bit/);
  });

  it('reads a frame in steps: JSON, an object, an event, a known event, its schema', () => {
    const known = { ping: z.object({ event: z.literal('ping'), n: z.number() }) };
    assert.deepEqual(parseKnownFrame('{"event":"ping","n":1}', known), { kind: 'parsed', frame: { event: 'ping', n: 1 } });
    assert.equal(parseKnownFrame('{"event": "ping", "n": ', known).kind, 'malformed');
    assert.deepEqual(parseKnownFrame('[1]', known), { kind: 'malformed', problem: 'not a JSON object' });
    assert.deepEqual(parseKnownFrame('{"n":1}', known), { kind: 'malformed', problem: 'no "event" string' });
    assert.deepEqual(parseKnownFrame('{"event":"toString"}', known), { kind: 'unknown', event: 'toString' });
    assert.deepEqual(parseKnownFrame('{"event":"ping","n":"1"}', known), { kind: 'malformed', problem: 'ping: n: Invalid input: expected number, received string' });
  });

  it('maps each provider\'s start, keys and mark echoes onto the same frames', () => {
    const a = parseFrameA(JSON.stringify({ event: 'start', streamSid: 'MZ1', start: { accountSid: 'AC1', callSid: 'CA1', mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } }));
    assert.deepEqual(a, { kind: 'start', streamId: 'MZ1', callId: 'CA1', accountId: 'AC1', format: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } });
    const b = parseFrameB(JSON.stringify({ event: 'start', stream_sid: 's1', start: { call_sid: 'c1', account_sid: 'a1', media_format: { encoding: 'audio/x-raw', sample_rate: '8000', bit_rate: '16' } } }));
    assert.deepEqual(b, { kind: 'start', streamId: 's1', callId: 'c1', accountId: 'a1', format: { encoding: 'audio/x-raw', sampleRate: 8000, bitsPerSample: 16 } });
    assert.deepEqual(parseFrameB(JSON.stringify({ event: 'dtmf', stream_sid: 's1', dtmf: { digit: 'a', duration: '250' } })), { kind: 'dtmf', streamId: 's1', digit: 'A', durationMs: 250 });
    assert.deepEqual(parseFrameC(JSON.stringify({ event: 'playedStream', streamId: 'x', name: 'm3' })), { kind: 'mark', streamId: 'x', name: 'm3' });
    assert.deepEqual(parseFrameC(JSON.stringify({ event: 'media', streamId: 'x', media: { payload: '%%' } })), { kind: 'malformed', problem: 'media: media.payload: media.payload is not base64' });
  });
});
