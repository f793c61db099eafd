import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { grammarDictionary, loadPronunciations, type Pronunciations } from './pocketsphinx-dictionary.js';
import { buildRecognitionGrammar, parseBacktrace, scoreHypothesis, valueWordsOf, type GrammarInput, type ScoredHypothesis } from './recognition-grammar.js';
import { noiseSeeds, recogniserSpeech, wav16k, withLineNoise } from './recogniser-audio.js';
import type { Alternative } from '../../core/ports/conversation.js';
import { SpeechProviderError, type SttOptions, type SttProvider, type SttStream, type Transcript } from './speech-provider.js';

const MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

/** Words every grammar accepts: answers callers give to most questions. */
export const baseVocabulary: readonly string[] = [
  'yes', 'yeah', 'no', 'not', 'okay', 'sure', 'maybe', 'please', 'thanks', 'thank', 'you', 'hello', 'hi', 'bye', 'goodbye',
  'i', 'will', 'can', 'cannot', 'do', 'dont', 'want', 'need', 'to', 'the', 'a', 'it', 'is', 'that', 'this', 'my', 'me', 'and',
  'zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'hundred', 'thousand',
];

/**
 * Log-likelihood per 10 ms by which the reading with the knowledge words must beat the answer
 * grammar's to count as a question. Measured on flite (bench/hearing-accuracy.ts): questions 1.8
 * to 12.3 better ("do refund approvals need a manager?" 1.8 and 1.9, read by the answer grammar
 * as a confident "human ... come come i'll i'm"), intent phrases -0.2 to 0.9 (one voice 3.4,
 * still heard as its intent).
 */
const QUESTION_SCORE_GAP = 1.5;

type Scored = ScoredHypothesis & { score: number; frames: number };
const perFrame = (s: Scored): number => s.score / Math.max(1, s.frames);

/** pocketsphinx search beams for grammar decoding (defaults 1e-48 / 1e-48 / 7e-29). */
const wideBeams = ['-beam', '1e-60', '-pbeam', '1e-60', '-wbeam', '1e-45'];

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
  /** Peak level of the upper-band noise, as a fraction of full scale; the floor under the speech is a third of it (recogniser-audio.ts: why). */
  readonly noiseLevel?: number;
}

/** 0.8 of the level white noise had over the whole band (bench/hearing-accuracy.ts). */
const defaultNoiseLevel = 0.0024;

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
    const pronunciations = await loadPronunciations(modelDir).catch((error: unknown) => {
      throw new SpeechProviderError(this.name, 'pocketsphinx-en-us model not installed', false, error);
    });
    const known = pronunciations.known;
    const run = (wav: string, grammar: string, extra: readonly string[] = [], logFile?: string): Promise<string> =>
      decode(this.options.binary, modelDir, pronunciations, wav, grammar, extra, options.signal, logFile);
    // A grammar loop (`<word>+`, `<phrase>+`) can lose every path under the default beams: the same
    // answer, shifted by a few samples, came back empty in 3 of 30 alignments (a caller heard as
    // saying nothing, depending on where the VAD cut the turn). Only then, the text is decoded
    // again with the wide beams (about 0.15 s more), which find a path.
    const transcribe = async (wav: string, grammar: string): Promise<string> => {
      const text = joinLines(await run(wav, grammar));
      return text || !grammar ? text : joinLines(await run(wav, grammar, wideBeams));
    };
    if (this.options.phrases) {
      const grammar = buildPhraseGrammar(this.options.phrases, known) ?? '';
      return new PocketsphinxStream(this.options, options.signal, async ([wav]) => ({ text: await transcribe(wav!, grammar) }));
    }
    if (options.expectation) {
      // The block said what it can accept: its phrase groups and values against a filler model,
      // so the result carries a confidence and a competing reading (recognition-grammar.ts).
      const input = { ...options.expectation, words: [...(this.options.vocabulary ?? []), ...options.keywords], questionWords: options.expectation.words ?? [] } satisfies GrammarInput;
      // Fillers must not be cheap: a word insertion penalty makes runs of single-phone fillers
      // lose against an expected phrase that fits. 3e-3 was tuned on 172 flite utterances over
      // G.711 (four voices, answers in and out of scope; docs/voice-pipeline.md): 1e-3 let stray
      // phrases win, 1e-2 lost short answers to fillers, and common English words as extra
      // garbage cost more right answers than they saved.
      // The default beams prune an expected phrase while the cheap one-phone fillers survive, so
      // whole answers came back as fillers only ("this amount is wrong, I already paid" -> "");
      // wider beams (bench/hearing-accuracy.ts: 56 -> 58 of 72 right, same with 1e-80) cost
      // about 0.15 s more per decode.
      const scored = async (wav: string, grammarInput: GrammarInput, without?: string): Promise<Scored> => {
        const log = `${wav}.${randomUUID()}.log`;
        try {
          await run(wav, buildRecognitionGrammar(grammarInput, known, without), ['-backtrace', 'yes', '-wip', '3e-3', ...wideBeams], log);
          const decoding = parseBacktrace(await readFile(log, 'utf8').catch(() => ''));
          return { ...scoreHypothesis(decoding.units, grammarInput, known), score: decoding.score, frames: decoding.frames };
        } finally {
          await rm(log, { force: true });
        }
      };
      const answers: GrammarInput = { ...input, questionWords: [] };
      return new PocketsphinxStream(
        this.options,
        options.signal,
        async ([wav, otherNoise]) => {
          // A block that also answers questions: its knowledge words beside its phrases bend answers
          // into question words ("talk to" -> "top"), so the answer grammar decodes alone and the
          // question reading is taken only when it explains the audio clearly better.
          const [answer, asked, answerAgain] = await Promise.all([
            scored(wav!, answers),
            input.questionWords.length > 0 ? scored(wav!, input) : undefined,
            otherNoise ? scored(otherNoise, answers) : undefined,
          ]);
          // The margin protects answers from being bent into question words; when neither noise
          // realisation heard any answer in the audio there is none to protect, and the likelier
          // reading wins (slt's "how often should I water my snake plant?": 1.47 ahead of an
          // answer reading of carrier words and fillers, "Sorry, I did not catch that" each time).
          const answerHeard = Boolean(answer.dominant || answerAgain?.dominant);
          const question = asked && perFrame(asked) - perFrame(answer) > (answerHeard ? QUESTION_SCORE_GAP : 0);
          // The same audio under the other noise realisation: a decoding that flips with the noise
          // is no hearing to act on at once. The realisation that heard a meaning (the more
          // confident one when both did) is the reading; the other stands beside it as a rival,
          // as likely by construction, so the block's rival check confirms first when it means
          // something else or nothing ("bye" heard under one noise, "i" under the other).
          const realisations = [{ wav: wav!, reading: answer }, ...(answerAgain ? [{ wav: otherNoise!, reading: answerAgain }] : [])].sort(
            (a, b) => Number(Boolean(b.reading.dominant)) - Number(Boolean(a.reading.dominant)) || b.reading.confidence - a.reading.confidence,
          );
          const [heardWav, first, grammarInput] = question ? [wav!, asked, input] : [realisations[0]!.wav, realisations[0]!.reading, answers];
          const otherRealisation = question ? undefined : realisations[1]?.reading;
          // Values heard differently under the two noises ("the third of december" / "that there
          // eight of december") are as doubtful as a meaning that flips.
          const otherValues = otherRealisation && valueWordsOf(otherRealisation.text, answers) !== valueWordsOf(first.text, answers);
          const flipped: Alternative[] = otherRealisation && (otherRealisation.dominant !== first.dominant || otherValues) ? [{ text: otherRealisation.text, confidence: otherRealisation.confidence, scoreGap: 0 }] : [];
          if (!first.dominant || !first.text) return { text: first.text, confidence: first.confidence, meaning: first.dominant ?? '', ...(flipped.length > 0 && first.text ? { alternatives: flipped } : {}) };
          // The n-best, the grammar way: how likely is the audio without the winning meaning? The
          // reading that covers more of the speech comes first; the likelihood gap (negative when
          // the other path is likelier: a beam search does not always find the best path) says
          // how close the other reading is.
          const second = await scored(heardWav, grammarInput, first.dominant);
          const [best, other] = second.text && second.confidence > first.confidence ? [second, first] : [first, second];
          const scoreGap = (best.score - other.score) / Math.max(1, best.frames);
          const alternatives: Alternative[] = [...(other.text ? [{ text: other.text, confidence: other.confidence, scoreGap }] : []), ...flipped];
          return { text: best.text, confidence: best.confidence, meaning: best.dominant ?? '', ...(alternatives.length > 0 ? { alternatives } : {}) };
        },
        noiseSeeds.length,
      );
    }
    const grammar = buildGrammar([...baseVocabulary, ...(this.options.vocabulary ?? []), ...options.keywords], known) ?? '';
    return new PocketsphinxStream(this.options, options.signal, async ([wav]) => ({ text: await transcribe(wav!, grammar) }));
  }
}

/** The decoder's reading of one utterance. */
type Reading = Omit<Transcript, 'final'>;

/** One pocketsphinx run over a 16 kHz WAV file; '' when the call ended meanwhile. */
async function decode(
  binary: string | undefined,
  modelDir: string,
  pronunciations: Pronunciations,
  wav: string,
  grammar: string,
  extra: readonly string[],
  signal: AbortSignal,
  logFile = '/dev/null',
): Promise<string> {
  const run = `${wav}.${randomUUID()}`;
  const grammarFile = `${run}.jsgf`;
  const dictFile = `${run}.dict`;
  const args = ['-hmm', join(modelDir, 'en-us'), '-infile', wav, '-logfn', logFile, ...extra];
  try {
    if (grammar) {
      await writeFile(grammarFile, grammar);
      await writeFile(dictFile, grammarDictionary(grammar, pronunciations));
      args.push('-jsgf', grammarFile, '-dict', dictFile);
    } else {
      args.push('-lm', join(modelDir, 'en-us.lm.bin'), '-dict', join(modelDir, 'cmudict-en-us.dict'));
    }
    return await new Promise<string>((resolve, reject) => {
      execFile(binary ?? 'pocketsphinx_continuous', args, { signal, timeout: 20_000 }, (error, out) => {
        if (error) reject(error);
        else resolve(out);
      });
    }).catch((error: unknown) => {
      if (signal.aborted) return '';
      throw new SpeechProviderError('pocketsphinx', `recognition failed: ${(error as Error).message}`, false, error);
    });
  } finally {
    await Promise.all([rm(grammarFile, { force: true }), rm(dictFile, { force: true })]);
  }
}

function joinLines(stdout: string): string {
  return stdout.split('\n').map((l) => l.trim()).filter(Boolean).join(' ');
}

class PocketsphinxStream implements SttStream {
  private readonly chunks: Int16Array[] = [];
  private readonly listeners: ((t: Transcript) => void)[] = [];
  private aborted = false;

  constructor(
    private readonly options: PocketsphinxOptions,
    private readonly signal: AbortSignal,
    /** The same turn with each noise realisation (one WAV file each), as many as `realisations`. */
    private readonly recognise: (wavFiles: readonly string[]) => Promise<Reading>,
    private readonly realisations = 1,
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
    const speech = recogniserSpeech(pcm);
    const level = this.options.noiseLevel ?? defaultNoiseLevel;
    const id = randomUUID();
    const wavs = noiseSeeds.slice(0, this.realisations).map((_, i) => join(tmpdir(), `vap-stt-${id}-${i}.wav`));
    try {
      await Promise.all(wavs.map((wav, i) => writeFile(wav, wav16k(withLineNoise(speech, noiseSeeds[i]!, level, level / 3)))));
      const reading = await this.recognise(wavs);
      if (this.signal.aborted) return '';
      for (const l of this.listeners) l({ ...reading, final: true });
      return reading.text;
    } finally {
      await Promise.all(wavs.map((wav) => rm(wav, { force: true })));
    }
  }
}
