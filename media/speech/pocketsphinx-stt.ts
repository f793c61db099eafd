import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { upsample2x } from './resampler.js';
import { SpeechProviderError, type SttOptions, type SttProvider, type SttStream, type Transcript } from './speech-provider.js';

const MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

/** Words every grammar accepts: answers callers give to most questions. */
export const baseVocabulary: readonly string[] = [
  'yes', 'yeah', 'no', 'not', 'okay', 'sure', 'maybe', 'please', 'thanks', 'thank', 'you', 'hello', 'hi', 'bye', 'goodbye',
  'i', 'will', 'can', 'cannot', 'do', 'dont', 'want', 'need', 'to', 'the', 'a', 'it', 'is', 'that', 'this', 'my', 'me', 'and',
  'zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'hundred', 'thousand',
];

export interface PocketsphinxOptions {
  readonly binary?: string;
  readonly modelDir?: string;
  /** Words added to every grammar (e.g. what the recipe's blocks expect). */
  readonly vocabulary?: readonly string[];
  /**
   * Whole phrases instead of a bag of words: the grammar accepts a sequence of these phrases
   * only (when the expected sentences are known, e.g. checking what an agent said).
   */
  readonly phrases?: readonly string[];
  /** Low white noise mixed in, as a fraction of full scale (see docs/voice-pipeline.md: why). */
  readonly noiseLevel?: number;
}

let dictionary: Promise<ReadonlySet<string>> | undefined;
function loadDictionary(modelDir: string): Promise<ReadonlySet<string>> {
  dictionary ??= readFile(join(modelDir, 'cmudict-en-us.dict'), 'utf8').then(
    (text) => new Set(text.split('\n').map((line) => line.slice(0, line.indexOf(' '))).filter((w) => w && !w.includes('('))),
  );
  return dictionary;
}

/** A JSGF grammar accepting any sequence of the given words (those the dictionary knows). */
export function buildGrammar(words: Iterable<string>, known: ReadonlySet<string>): string | undefined {
  const vocab = new Set<string>();
  for (const phrase of words) {
    for (const w of phrase.toLowerCase().split(/[^a-z']+/)) if (w && known.has(w)) vocab.add(w);
  }
  if (vocab.size === 0) return undefined;
  return `#JSGF V1.0;\ngrammar utterance;\npublic <utterance> = <word>+;\n<word> = ${[...vocab].sort().join(' | ')};\n`;
}

/** A JSGF grammar accepting one or more of the given phrases in sequence. */
export function buildPhraseGrammar(phrases: readonly string[], known: ReadonlySet<string>): string | undefined {
  const alternatives = phrases
    .map((p) => p.toLowerCase().split(/[^a-z']+/).filter((w) => w && known.has(w)).join(' '))
    .filter(Boolean);
  if (alternatives.length === 0) return undefined;
  return `#JSGF V1.0;\ngrammar phrases;\npublic <utterance> = <phrase>+;\n<phrase> = ${[...new Set(alternatives)].map((a) => `( ${a} )`).join(' | ')};\n`;
}

/** 16 kHz mono 16-bit WAV header + data. */
function wav16k(samples: Int16Array): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples.length * 2, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(16000, 24);
  header.writeUInt32LE(32000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples.length * 2, 40);
  return Buffer.concat([header, Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength)]);
}

/**
 * Offline STT with Debian's pocketsphinx 0.8 (en-US model only). It is not streaming: audio is
 * kept until `finish`, then recognised in one run (~0.2 s for a short answer). Telephony audio
 * is upsampled to the model's 16 kHz and low white noise fills the empty upper band, and the
 * search is constrained to a JSGF grammar of the expected words: measured on this machine, the
 * generic language model returns nothing useful on 8 kHz speech (see ARCHITECTURE facts).
 */
export class PocketsphinxStt implements SttProvider {
  readonly name = 'pocketsphinx';

  constructor(private readonly options: PocketsphinxOptions = {}) {}

  async open(options: SttOptions): Promise<SttStream> {
    if (!options.language.toLowerCase().startsWith('en')) {
      throw new SpeechProviderError(this.name, `no offline model for language ${options.language}`, true);
    }
    const modelDir = this.options.modelDir ?? MODEL_DIR;
    const known = await loadDictionary(modelDir).catch((error: unknown) => {
      dictionary = undefined;
      throw new SpeechProviderError(this.name, 'pocketsphinx-en-us model not installed', false, error);
    });
    const grammar = this.options.phrases
      ? buildPhraseGrammar(this.options.phrases, known)
      : buildGrammar([...baseVocabulary, ...(this.options.vocabulary ?? []), ...options.keywords], known);
    return new PocketsphinxStream(this.options, modelDir, grammar ?? '', options.signal);
  }
}

class PocketsphinxStream implements SttStream {
  private readonly chunks: Int16Array[] = [];
  private readonly listeners: ((t: Transcript) => void)[] = [];
  private aborted = false;

  constructor(
    private readonly options: PocketsphinxOptions,
    private readonly modelDir: string,
    private readonly grammar: string,
    private readonly signal: AbortSignal,
  ) {}

  push(samples: Int16Array): void {
    if (!this.aborted) this.chunks.push(samples.slice());
  }

  onTranscript(listener: (t: Transcript) => void): void {
    this.listeners.push(listener);
  }

  abort(): void {
    this.aborted = true;
    this.chunks.length = 0;
  }

  async finish(): Promise<string> {
    if (this.aborted || this.signal.aborted) return '';
    const total = this.chunks.reduce((n, c) => n + c.length, 0);
    const pcm = new Int16Array(total);
    let at = 0;
    for (const c of this.chunks) {
      pcm.set(c, at);
      at += c.length;
    }
    const up = upsample2x(pcm);
    const amplitude = (this.options.noiseLevel ?? 0.003) * 32767;
    // A fixed-seed generator (LCG, Numerical Recipes constants): the same audio always gets the
    // same noise, so recognition is repeatable.
    let seed = 0x2545f491;
    for (let i = 0; i < up.length; i++) {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      up[i] = Math.max(-32768, Math.min(32767, up[i]! + Math.round((seed / 0x80000000 - 1) * amplitude)));
    }
    const base = join(tmpdir(), `vap-stt-${randomUUID()}`);
    try {
      await writeFile(`${base}.wav`, wav16k(up));
      const args = ['-hmm', join(this.modelDir, 'en-us'), '-dict', join(this.modelDir, 'cmudict-en-us.dict'), '-infile', `${base}.wav`, '-logfn', '/dev/null'];
      if (this.grammar) {
        await writeFile(`${base}.jsgf`, this.grammar);
        args.push('-jsgf', `${base}.jsgf`);
      } else {
        args.push('-lm', join(this.modelDir, 'en-us.lm.bin'));
      }
      const stdout = await new Promise<string>((resolve, reject) => {
        execFile(this.options.binary ?? 'pocketsphinx_continuous', args, { signal: this.signal, timeout: 20_000 }, (error, out) => {
          if (error) reject(error);
          else resolve(out);
        });
      }).catch((error: unknown) => {
        if (this.signal.aborted) return '';
        throw new SpeechProviderError('pocketsphinx', `recognition failed: ${(error as Error).message}`, false, error);
      });
      const text = stdout.split('\n').map((l) => l.trim()).filter(Boolean).join(' ');
      for (const l of this.listeners) l({ text, final: true });
      return text;
    } finally {
      await rm(`${base}.wav`, { force: true });
      await rm(`${base}.jsgf`, { force: true });
    }
  }
}
