import { loadPronunciations } from './pocketsphinx-dictionary.js';
import { buildRecognitionGrammar, decodingOf, fillerDictionary, scoreHypothesis, valueWordsOf, type GrammarInput, type ScoredHypothesis } from './recognition-grammar.js';
import { noiseSeeds } from './recogniser-audio.js';
import { OfflineUtterance, type Reading, type Recognise } from './offline-utterance.js';
import { offlineRecogniser } from './recogniser/offline-recogniser.js';
import type { RecogniserPool } from './recogniser/recogniser-pool.js';
import type { DecodeRequest } from './recogniser/protocol.js';
import type { Alternative } from '../../core/ports/conversation.js';
import { SpeechProviderError, type SttOptions, type SttProvider, type SttStream } from './speech-provider.js';

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
 * still heard as its intent). 1.5 -> 1.65 (2026-11-28, tuning split): slt's "Can I talk to a
 * human agent please" is 1.55 (read "top money", a question) and is now its intent; 95 -> 96
 * right of 116, 0 wrong either way.
 */
const QUESTION_SCORE_GAP = 1.65;

type Scored = ScoredHypothesis & { score: number; frames: number };
const perFrame = (s: Scored): number => s.score / Math.max(1, s.frames);

/** pocketsphinx search beams for grammar decoding (defaults 1e-48 / 1e-48 / 7e-29). */
const wideBeams = [1e-60, 1e-60, 1e-45] as const;

/** The filler pseudo-words and extra words, which the model's dictionary lacks: [word, phones]. */
const extraWords: readonly (readonly [string, string])[] = fillerDictionary()
  .split('\n')
  .filter(Boolean)
  .map((line) => [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)] as const);

export interface PocketsphinxOptions {
  /** The decoder workers (default: the process's shared offline recogniser). */
  readonly pool?: RecogniserPool;
  /** Where the dictionary is read for the words a grammar may use. */
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

/**
 * Reads the model's dictionary now (135k words parsed on the event loop, 110 ms here), so the
 * first caller turn of the process does not: every call's audio stalled for it once (issue 30,
 * bench/sip-overload.ts). The gateway role calls it at start; a missing model fails later, per turn.
 */
export async function preloadPronunciations(modelDir = MODEL_DIR): Promise<void> {
  await loadPronunciations(modelDir).catch(() => undefined);
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

/**
 * Offline STT with Debian's pocketsphinx 0.8 (en-US model only), through the process's pool of
 * long-lived decoders (recogniser/recogniser-pool.ts): each turn, as the platform's endpointer
 * cut it, is decoded as one utterance. Telephony audio is upsampled to the model's 16 kHz with
 * low line noise where a phone line carries nothing (recogniser-audio.ts), and the search is
 * constrained to a JSGF grammar of what the block expects: measured on this machine, the generic
 * language model returns nothing useful on 8 kHz speech (see ARCHITECTURE facts).
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
    const pool = this.options.pool ?? offlineRecogniser();
    // The stream opens when the caller starts speaking: a pool not started yet (tests, benches;
    // the gateway role starts it with the role) loads its decoders meanwhile.
    pool.warm();
    const decode = async (request: Omit<DecodeRequest, 'words'>, signal: AbortSignal) => {
      try {
        return await pool.decode({ ...request, words: extraWords }, signal);
      } catch (error) {
        if (signal.aborted) return undefined;
        throw error instanceof SpeechProviderError ? error : new SpeechProviderError(this.name, `recognition failed: ${(error as Error).message}`, false, error);
      }
    };
    // A grammar loop (`<word>+`, `<phrase>+`) can lose every path under the default beams: the same
    // answer, shifted by a few samples, came back empty in 3 of 30 alignments (a caller heard as
    // saying nothing, depending on where the VAD cut the turn). Only then, the text is decoded
    // again with the wide beams, which find a path.
    const transcribe = async (pcm: Int16Array, grammar: string, signal: AbortSignal): Promise<string> => {
      const search = grammar ? { jsgf: grammar } : ({ lm: true } as const);
      const text = (await decode({ search, pcm }, signal))?.text ?? '';
      return text || !grammar ? text : ((await decode({ search, pcm, beams: wideBeams }, signal))?.text ?? '');
    };
    const stream = (recognise: Recognise, realisations = 1): SttStream =>
      new OfflineUtterance({
        signal: options.signal,
        recognise,
        realisations,
        noiseLevel: this.options.noiseLevel ?? defaultNoiseLevel,
        // Only with a worker to spare: under load an early decoding of a turn that goes on would
        // take a worker from another call's finished turn.
        mayDecodeEarly: () => {
          const load = pool.load();
          return load.queued === 0 && load.busy < load.workers;
        },
      });
    if (this.options.phrases) {
      const grammar = buildPhraseGrammar(this.options.phrases, known) ?? '';
      return stream(async ([pcm], signal) => ({ text: await transcribe(pcm!, grammar, signal) }));
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
      // more per decode.
      const scored = async (pcm: Int16Array, grammarInput: GrammarInput, signal: AbortSignal, without?: string): Promise<Scored | undefined> => {
        const result = await decode({ search: { jsgf: buildRecognitionGrammar(grammarInput, known, without) }, pcm, beams: wideBeams, wip: 3e-3 }, signal);
        if (!result) return undefined;
        const decoding = decodingOf(result);
        return { ...scoreHypothesis(decoding.units, grammarInput, known), score: decoding.score, frames: decoding.frames };
      };
      const answers: GrammarInput = { ...input, questionWords: [] };
      return stream(async ([pcm, otherNoise], signal) => {
        // A block that also answers questions: its knowledge words beside its phrases bend answers
        // into question words ("talk to" -> "top"), so the answer grammar decodes alone and the
        // question reading is taken only when it explains the audio clearly better.
        const [answer, asked, answerAgain] = await Promise.all([
          scored(pcm!, answers, signal),
          input.questionWords.length > 0 ? scored(pcm!, input, signal) : undefined,
          otherNoise ? scored(otherNoise, answers, signal) : undefined,
        ]);
        if (!answer) return nothing;
        return readingOf({ pcm: pcm!, answer, asked, answerAgain, otherNoise, input, answers }, (audio, grammarInput, without) => scored(audio, grammarInput, signal, without));
      }, noiseSeeds.length);
    }
    const grammar = buildGrammar([...baseVocabulary, ...(this.options.vocabulary ?? []), ...options.keywords], known) ?? '';
    return stream(async ([pcm], signal) => ({ text: await transcribe(pcm!, grammar, signal) }));
  }
}

const nothing: Reading = { text: '', confidence: 0, meaning: '' };

interface Decodings {
  readonly pcm: Int16Array;
  readonly answer: Scored;
  readonly asked: Scored | undefined;
  readonly answerAgain: Scored | undefined;
  readonly otherNoise: Int16Array | undefined;
  readonly input: GrammarInput;
  readonly answers: GrammarInput;
}

/** The turn's reading from its first decodings, and a competing one (the n-best, the grammar way). */
async function readingOf(d: Decodings, rescore: (pcm: Int16Array, grammarInput: GrammarInput, without: string) => Promise<Scored | undefined>): Promise<Reading> {
  const { answer, asked, answerAgain, answers, input } = d;
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
  const realisations = [{ pcm: d.pcm, reading: answer }, ...(answerAgain && d.otherNoise ? [{ pcm: d.otherNoise, reading: answerAgain }] : [])].sort(
    (a, b) => Number(Boolean(b.reading.dominant)) - Number(Boolean(a.reading.dominant)) || b.reading.confidence - a.reading.confidence,
  );
  const [heardPcm, first, grammarInput] = question && asked ? [d.pcm, asked, input] : [realisations[0]!.pcm, realisations[0]!.reading, answers];
  const otherRealisation = question ? undefined : realisations[1]?.reading;
  // Values heard differently under the two noises ("the third of december" / "that there
  // eight of december") are as doubtful as a meaning that flips.
  const otherValues = otherRealisation && valueWordsOf(otherRealisation.text, answers) !== valueWordsOf(first.text, answers);
  const flipped: Alternative[] = otherRealisation && (otherRealisation.dominant !== first.dominant || otherValues) ? [{ text: otherRealisation.text, confidence: otherRealisation.confidence, scoreGap: 0 }] : [];
  if (!first.dominant || !first.text) return { text: first.text, confidence: first.confidence, meaning: first.dominant ?? '', ...(flipped.length > 0 && first.text ? { alternatives: flipped } : {}) };
  // How likely is the audio without the winning meaning? The reading that covers more of the
  // speech comes first; the likelihood gap (negative when the other path is likelier: a beam
  // search does not always find the best path) says how close the other reading is.
  const second = await rescore(heardPcm, grammarInput, first.dominant);
  if (!second) return nothing;
  const [best, other] = second.text && second.confidence > first.confidence ? [second, first] : [first, second];
  const scoreGap = (best.score - other.score) / Math.max(1, best.frames);
  const alternatives: Alternative[] = [...(other.text ? [{ text: other.text, confidence: other.confidence, scoreGap }] : []), ...flipped];
  return { text: best.text, confidence: best.confidence, meaning: best.dominant ?? '', ...(alternatives.length > 0 ? { alternatives } : {}) };
}
