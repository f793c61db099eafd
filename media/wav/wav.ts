import { open, readFile, writeFile, type FileHandle } from 'node:fs/promises';
import { AppError, notFound } from '../../core/errors.js';
import { pcma, pcmu, SAMPLE_RATE } from '../codecs/g711.js';

/**
 * RIFF/WAVE read and write for call audio. Reading yields 8 kHz mono 16-bit PCM from PCM16,
 * mu-law (format 7) or A-law (format 6) files; PCM16 at an integer multiple of 8 kHz is decimated
 * and stereo is mixed down, because both are cheap. Anything else is rejected with a clear error.
 */

const WAVE_FORMAT_PCM = 1;
const WAVE_FORMAT_ALAW = 6;
const WAVE_FORMAT_MULAW = 7;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

export class UnsupportedWavError extends AppError {
  constructor(detail: string) {
    super('invalid_argument', `unsupported WAV file: ${detail} (need PCM 16-bit, mu-law or A-law; 8 kHz or a multiple for PCM)`);
    this.name = 'UnsupportedWavError';
  }
}

interface WavFormat {
  format: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
}

function readFormat(chunk: Buffer): WavFormat {
  if (chunk.length < 16) throw new UnsupportedWavError('fmt chunk too short');
  let format = chunk.readUInt16LE(0);
  // WAVE_FORMAT_EXTENSIBLE carries the real format in the first two bytes of its SubFormat GUID.
  if (format === WAVE_FORMAT_EXTENSIBLE && chunk.length >= 26) format = chunk.readUInt16LE(24);
  return { format, channels: chunk.readUInt16LE(2), sampleRate: chunk.readUInt32LE(4), bitsPerSample: chunk.readUInt16LE(14) };
}

/** Decodes a WAV held in memory to 8 kHz mono PCM. */
export function decodeWav(file: Buffer): Int16Array {
  if (file.length < 12 || file.toString('ascii', 0, 4) !== 'RIFF' || file.toString('ascii', 8, 12) !== 'WAVE') {
    throw new UnsupportedWavError('not a RIFF/WAVE file');
  }
  let fmt: WavFormat | undefined;
  let data: Buffer | undefined;
  for (let offset = 12; offset + 8 <= file.length; ) {
    const id = file.toString('ascii', offset, offset + 4);
    const size = file.readUInt32LE(offset + 4);
    // A writer that never patched its header leaves size 0 or 0xFFFFFFFF on data: take the rest.
    const end = Math.min(file.length, offset + 8 + size);
    const body = file.subarray(offset + 8, id === 'data' && (size === 0 || size === 0xffffffff) ? file.length : end);
    if (id === 'fmt ') fmt = readFormat(body);
    else if (id === 'data') data = body;
    offset = end + (size & 1);
    if (data && fmt) break;
  }
  if (!fmt) throw new UnsupportedWavError('no fmt chunk');
  if (!data) throw new UnsupportedWavError('no data chunk');
  const { format, channels, sampleRate, bitsPerSample } = fmt;
  if (channels < 1 || channels > 2) throw new UnsupportedWavError(`${channels} channels`);
  let interleaved: Int16Array;
  if (format === WAVE_FORMAT_PCM && bitsPerSample === 16) {
    interleaved = new Int16Array(Math.floor(data.length / 2));
    for (let i = 0; i < interleaved.length; i++) interleaved[i] = data.readInt16LE(i * 2);
  } else if ((format === WAVE_FORMAT_MULAW || format === WAVE_FORMAT_ALAW) && bitsPerSample === 8) {
    if (sampleRate !== SAMPLE_RATE) throw new UnsupportedWavError(`G.711 at ${sampleRate} Hz`);
    interleaved = (format === WAVE_FORMAT_MULAW ? pcmu : pcma).decode(data);
  } else {
    throw new UnsupportedWavError(`format ${format} with ${bitsPerSample} bits per sample`);
  }
  if (sampleRate % SAMPLE_RATE !== 0 || sampleRate === 0) throw new UnsupportedWavError(`sample rate ${sampleRate} Hz`);
  return toMono8k(interleaved, channels, sampleRate / SAMPLE_RATE);
}

/** Stereo mix-down and integer decimation with a box filter (averaging) as the anti-alias filter. */
function toMono8k(interleaved: Int16Array, channels: number, factor: number): Int16Array {
  if (channels === 1 && factor === 1) return interleaved;
  const frames = Math.floor(interleaved.length / channels);
  const out = new Int16Array(Math.floor(frames / factor));
  const span = channels * factor;
  for (let i = 0; i < out.length; i++) {
    let sum = 0;
    const base = i * span;
    for (let k = 0; k < span; k++) sum += interleaved[base + k] ?? 0;
    out[i] = Math.round(sum / span);
  }
  return out;
}

export async function readWav(path: string): Promise<Int16Array> {
  let file: Buffer;
  try {
    file = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`WAV file ${path}`);
    throw error;
  }
  return decodeWav(file);
}

function header(channels: number, dataBytes: number, sampleRate = SAMPLE_RATE): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(WAVE_FORMAT_PCM, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * channels * 2, 28);
  h.writeUInt16LE(channels * 2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

/** Encodes PCM16 (interleaved when stereo; 8 kHz unless told) as a WAV file in memory. */
export function encodeWav(samples: Int16Array, channels = 1, sampleRate = SAMPLE_RATE): Buffer {
  const body = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) body.writeInt16LE(samples[i] ?? 0, i * 2);
  return Buffer.concat([header(channels, body.length, sampleRate), body]);
}

export async function writeWav(path: string, samples: Int16Array, channels = 1, sampleRate = SAMPLE_RATE): Promise<void> {
  await writeFile(path, encodeWav(samples, channels, sampleRate));
}

/**
 * Streams PCM16 (8 kHz, or 16 kHz for a wideband call) into a WAV file: a provisional header first, appended sample blocks (writes
 * are serialised on one promise chain), and the real sizes patched in on `close()`.
 */
export class WavFileWriter {
  private dataBytes = 0;
  private chain: Promise<unknown>;
  private failure: unknown;

  private constructor(
    private readonly file: FileHandle,
    readonly channels: number,
    readonly sampleRate: number,
  ) {
    this.chain = file.write(header(channels, 0, sampleRate), 0, 44, 0);
  }

  static async create(path: string, channels = 1, sampleRate = SAMPLE_RATE): Promise<WavFileWriter> {
    return new WavFileWriter(await open(path, 'w'), channels, sampleRate);
  }

  /** Queues interleaved samples; never blocks the media tick. */
  write(interleaved: Int16Array): void {
    const bytes = Buffer.from(interleaved.buffer, interleaved.byteOffset, interleaved.byteLength);
    // Copy: the caller may reuse its array; WAV is little-endian like every platform Node runs on here.
    const copy = Buffer.from(bytes);
    const position = 44 + this.dataBytes;
    this.dataBytes += copy.length;
    this.chain = this.chain.then(() => this.file.write(copy, 0, copy.length, position)).catch((e: unknown) => {
      this.failure ??= e;
    });
  }

  get durationMs(): number {
    return (this.dataBytes / 2 / this.channels / this.sampleRate) * 1000;
  }

  async close(): Promise<void> {
    await this.chain;
    try {
      await this.file.write(header(this.channels, this.dataBytes, this.sampleRate), 0, 44, 0);
    } finally {
      await this.file.close();
    }
    if (this.failure) throw this.failure;
  }
}
