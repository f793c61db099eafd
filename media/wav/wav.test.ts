import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pcmu } from '../codecs/g711.js';
import { decodeWav, encodeWav, readWav, UnsupportedWavError, WavFileWriter } from './wav.js';

function wavWith(format: number, channels: number, rate: number, bits: number, data: Buffer): Buffer {
  const h = encodeWav(new Int16Array(0), channels);
  h.writeUInt16LE(format, 20);
  h.writeUInt32LE(rate, 24);
  h.writeUInt16LE(bits, 34);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

describe('WAV files', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vap-wav-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('round-trips 8 kHz mono PCM16', async () => {
    const samples = Int16Array.from({ length: 800 }, (_, i) => (i * 37) % 20000 - 10000);
    await writeFile(join(dir, 'a.wav'), encodeWav(samples));
    assert.deepEqual(await readWav(join(dir, 'a.wav')), samples);
  });

  it('reads mu-law WAV (format 7)', () => {
    const pcm = Int16Array.from({ length: 160 }, (_, i) => Math.round(8000 * Math.sin(i / 5)));
    const law = Buffer.alloc(160);
    pcmu.encode(pcm, law);
    const decoded = decodeWav(wavWith(7, 1, 8000, 8, law));
    assert.deepEqual(decoded, pcmu.decode(law));
  });

  it('decimates 16 kHz stereo PCM to 8 kHz mono', () => {
    const interleaved = Int16Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? 100 : 300));
    const data = Buffer.from(interleaved.buffer);
    assert.deepEqual([...decodeWav(wavWith(1, 2, 16000, 16, data))], [200, 200, 200, 200]);
  });

  it('rejects 44.1 kHz, 24-bit and non-WAV input with a clear error', () => {
    assert.throws(() => decodeWav(wavWith(1, 1, 44100, 16, Buffer.alloc(4))), /sample rate 44100/);
    assert.throws(() => decodeWav(wavWith(1, 1, 8000, 24, Buffer.alloc(6))), /24 bits/);
    assert.throws(() => decodeWav(Buffer.from('ID3 not a wav')), (e: unknown) => e instanceof UnsupportedWavError && e.code === 'invalid_argument');
  });

  it('reports a missing file as not_found', async () => {
    await assert.rejects(readWav(join(dir, 'missing.wav')), (e: unknown) => e instanceof Error && 'code' in e && e.code === 'not_found');
  });

  it('streams a stereo file and patches the sizes on close', async () => {
    const path = join(dir, 'stream.wav');
    const writer = await WavFileWriter.create(path, 2);
    writer.write(Int16Array.of(1, -1, 2, -2));
    writer.write(Int16Array.of(3, -3));
    await writer.close();
    const file = await readFile(path);
    assert.equal(file.readUInt16LE(22), 2);
    assert.equal(file.readUInt32LE(40), 12);
    assert.equal(file.readUInt32LE(4), 48);
    assert.deepEqual([...new Int16Array(file.buffer.slice(file.byteOffset + 44, file.byteOffset + file.length))], [1, -1, 2, -2, 3, -3]);
    assert.deepEqual([...decodeWav(file)], [0, 0, 0], 'read back as mono: the two channels mixed');
  });
});
