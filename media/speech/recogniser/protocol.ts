import { StringDecoder } from 'node:string_decoder';

/**
 * The framed protocol between Node and a recogniser worker (worker.py) over its stdin/stdout:
 * a request is one line of JSON followed by exactly `bytes` bytes of 16 kHz 16-bit little-endian
 * PCM (no temp file per turn); a response is one line of JSON. JSON.stringify never emits a raw
 * newline, so a line is always one message.
 */

/** Which search decodes the utterance: a JSGF grammar (compiled once per worker, then switched to by name) or the open language model. */
export type SearchSpec = { readonly jsgf: string } | { readonly lm: true };

export interface DecodeRequest {
  readonly search: SearchSpec;
  /** -beam, -pbeam, -wbeam; pocketsphinx's defaults when absent. */
  readonly beams?: readonly [number, number, number];
  /** Word insertion probability (-wip); pocketsphinx's default 0.65 when absent. */
  readonly wip?: number;
  /** Dictionary entries the grammar uses that the model's dictionary lacks: [word, phones]. */
  readonly words?: readonly (readonly [string, string])[];
  /** The utterance at 16 kHz. */
  readonly pcm: Int16Array;
}

/** One entry of the decoder's best path (pocketsphinx `seg()`), frames of 10 ms. */
export interface DecodedSegment {
  readonly word: string;
  readonly startFrame: number;
  readonly endFrame: number;
  /** Acoustic score of the entry (with the insertion penalties the search applied). */
  readonly acoustic: number;
  /** Grammar (language) score of the entry. */
  readonly language: number;
}

export interface DecodeResult {
  /** The best path's words ('' when the search found no path). */
  readonly text: string;
  /** Log-likelihood of the best path (pocketsphinx `hyp().best_score`). */
  readonly score: number;
  readonly frames: number;
  /** The per-word insertion penalty the search applied (log domain, as pocketsphinx logs it). */
  readonly wordPenalty: number;
  /** Whether the worker compiled the grammar for this request (false: it switched to the search it kept). */
  readonly compiled: boolean;
  readonly segments: readonly DecodedSegment[];
  /** Time the worker spent on the request (search switch and decode). */
  readonly decodeMs: number;
  /** CPU time of that (the decode's cost, whatever else the machine runs). */
  readonly cpuMs: number;
}

/** The platform side's view of the pool's load (admission control reads it). */
export interface RecogniserLoad {
  /** Requests waiting for a free worker. */
  readonly queued: number;
  /** Requests being decoded. */
  readonly busy: number;
  readonly workers: number;
}

/** The request's header line and its audio, ready to write to the worker's stdin. */
export function encodeRequest(id: number, request: DecodeRequest): Buffer {
  const pcm = Buffer.from(request.pcm.buffer, request.pcm.byteOffset, request.pcm.byteLength);
  // Int16Array is in the host's byte order; every platform Node runs us on is little-endian, as
  // pocketsphinx expects.
  const header = {
    id,
    search: request.search,
    beams: request.beams ?? null,
    wip: request.wip ?? null,
    words: request.words ?? [],
    bytes: pcm.length,
  };
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), pcm]);
}

/** What a worker writes: its start line, or a response to request `id`. */
export type WorkerMessage =
  | { readonly kind: 'ready'; readonly pid: number }
  | { readonly kind: 'fatal'; readonly reason: string }
  | { readonly kind: 'result'; readonly id: number; readonly result: DecodeResult }
  | { readonly kind: 'failed'; readonly id: number; readonly reason: string };

type Raw = Record<string, unknown>;

/** Parses one line from a worker; undefined for a line that is not one of its messages. */
export function parseWorkerLine(line: string): WorkerMessage | undefined {
  let raw: Raw;
  try {
    raw = JSON.parse(line) as Raw;
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null) return undefined;
  if (raw['ready'] === true) return { kind: 'ready', pid: Number(raw['pid']) };
  if (typeof raw['fatal'] === 'string') return { kind: 'fatal', reason: raw['fatal'] };
  const id = raw['id'];
  if (typeof id !== 'number') return undefined;
  if (raw['ok'] !== true) return { kind: 'failed', id, reason: String(raw['error'] ?? 'the recogniser worker gave no reason') };
  const segments = Array.isArray(raw['segments']) ? (raw['segments'] as unknown[]) : [];
  return {
    kind: 'result',
    id,
    result: {
      text: String(raw['text'] ?? ''),
      score: Number(raw['score'] ?? 0),
      frames: Number(raw['frames'] ?? 0),
      wordPenalty: Number(raw['wip'] ?? 0),
      compiled: raw['compiled'] === true,
      decodeMs: Number(raw['decodeMs'] ?? 0),
      cpuMs: Number(raw['cpuMs'] ?? 0),
      segments: segments.filter(Array.isArray).map((s) => {
        const [word, startFrame, endFrame, acoustic, language] = s as [unknown, unknown, unknown, unknown, unknown];
        return { word: String(word), startFrame: Number(startFrame), endFrame: Number(endFrame), acoustic: Number(acoustic), language: Number(language) };
      }),
    },
  };
}

/** Splits a byte stream into lines (a response may arrive in several chunks, or several in one). */
export class LineSplitter {
  private pending = '';
  /** A UTF-8 character cut between two chunks is joined, not garbled. */
  private readonly decoder = new StringDecoder('utf8');

  push(chunk: Buffer, onLine: (line: string) => void): void {
    this.pending += this.decoder.write(chunk);
    for (let at = this.pending.indexOf('\n'); at >= 0; at = this.pending.indexOf('\n')) {
      const line = this.pending.slice(0, at).trim();
      this.pending = this.pending.slice(at + 1);
      if (line) onLine(line);
    }
  }
}
