import type { Logger } from '../../core/logger.js';
import { CallEndedError, type SayOptions, type SayResult } from '../../core/ports/conversation.js';
import type { CallMediaSession } from '../../core/ports/media.js';
import { normaliseForSpeech } from '../speech/normalise.js';
import type { PronunciationLexicon } from '../speech/pronunciation.js';
import type { TtsProvider } from '../speech/speech-provider.js';
import { unspokenWords } from './sentences.js';

export interface SpeechSettings {
  /** TTS voice (speech profile "Voice Name") and language. */
  readonly voice: string;
  readonly language: string;
  /** Speech profile name, for profile-scoped pronunciation words. */
  readonly profileName?: string;
  /** Phone number "Language" for STT. */
  readonly sttLanguage: string;
  /** Phone number "Boosted Keywords". */
  readonly keywords: readonly string[];
}

/** The agent's line now playing; the turn-taking policy reads it to decide on barge-in. */
export interface SpokenLine {
  readonly bargeIn: boolean;
  readonly stop: AbortController;
  interrupted: boolean;
}

export interface SpeakerOptions {
  readonly media: CallMediaSession;
  readonly tts: TtsProvider;
  readonly speech: SpeechSettings;
  readonly lexicon?: PronunciationLexicon;
  readonly logger: Logger;
  /** The agent's audio was stopped by the caller (metrics, latency measurement). */
  readonly onBargeIn?: () => void;
}

/**
 * The voice pipeline's mouth: sentences -> speech normalisation -> pronunciation words ->
 * streaming TTS -> paced call audio. On interruption it knows, from the samples actually sent,
 * which words the caller never heard (spec: Smart Interruption's unspoken portion).
 */
export class Speaker {
  /** The line playing now, if any. */
  current: SpokenLine | undefined;

  constructor(private readonly o: SpeakerOptions) {}

  /**
   * Speaks `sentences` until done or interrupted. `callSignal` ends it with the call;
   * `ended()` says whether the conversation is over (then the caller gets nothing more).
   */
  async speak(sentences: AsyncIterable<string>, { bargeIn, signal, speechNormalization, spellOut }: SayOptions, callSignal: AbortSignal, ended: () => boolean): Promise<SayResult & { text: string }> {
    const stop = new AbortController();
    const onAbort = (): void => stop.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    callSignal.addEventListener('abort', onAbort, { once: true });
    const line: SpokenLine = { bargeIn, stop, interrupted: false };
    this.current = line;
    const spoken: { text: string; start: number; end: number; complete: boolean }[] = [];
    let written = 0;
    const { tts, speech, lexicon, media } = this.o;
    // One iterator shared by the audio generator and the unspoken-text collector: play() closing
    // the generator on barge-in must not close the source of the sentences not yet spoken.
    const source = sentences[Symbol.asyncIterator]();
    async function* audio(): AsyncIterable<Int16Array> {
      for (;;) {
        if (stop.signal.aborted) return;
        const next = await source.next();
        if (next.done) return;
        const entry = { text: next.value, start: written, end: written, complete: false };
        spoken.push(entry);
        let prepared = normaliseForSpeech(next.value, speech.language, speechNormalization, spellOut);
        if (lexicon) prepared = lexicon.apply(prepared, speech.profileName);
        for await (const chunk of tts.synthesize({ text: prepared, voice: speech.voice, language: speech.language, signal: stop.signal })) {
          if (stop.signal.aborted) return;
          written += chunk.length;
          entry.end = written;
          yield chunk;
        }
        entry.complete = true;
      }
    }
    let queuedAtStop = 0;
    stop.signal.addEventListener('abort', () => (queuedAtStop = Math.round(media.output.queuedMs * 8)), { once: true });
    try {
      const outcome = await media.output.play(audio(), stop.signal);
      if (ended() || signal.aborted) throw new CallEndedError();
      const text = spoken.map((s) => s.text).join(' ');
      if (outcome === 'completed' && !line.interrupted) return { interrupted: false, text };
      // Where the caller cut in: samples actually sent, mapped to sentence and word.
      const played = Math.max(0, written - queuedAtStop);
      const rest: string[] = [];
      for (const s of spoken) {
        if (played >= s.end && s.complete) continue;
        if (played <= s.start) rest.push(s.text);
        else rest.push(unspokenWords(s.text, (played - s.start) / Math.max(1, s.complete ? s.end - s.start : estimateSamples(s.text))));
      }
      // Sentences never pulled (the model may still be streaming them) are unspoken too, and part
      // of the line the transcript keeps.
      const later: string[] = [];
      if (!ended()) for (let next = await source.next(); !next.done; next = await source.next()) later.push(next.value);
      return { interrupted: true, unspoken: [...rest, ...later].filter(Boolean).join(' '), text: [text, ...later].filter(Boolean).join(' ') };
    } finally {
      signal.removeEventListener('abort', onAbort);
      callSignal.removeEventListener('abort', onAbort);
      if (this.current === line) this.current = undefined;
    }
  }

  /** Barge-in: agent audio stops now (queue cleared), synthesis is cancelled. */
  interrupt(): void {
    const line = this.current;
    if (!line || line.interrupted) return;
    line.interrupted = true;
    this.o.onBargeIn?.();
    line.stop.abort();
    this.o.media.output.clear();
    this.o.logger.debug('barge-in: agent audio stopped');
  }

  /** The call is over: whatever plays stops. */
  silence(): void {
    this.current?.stop.abort();
    this.o.media.output.clear();
  }
}

/** About 14 characters per second of speech, at 8 kHz. */
function estimateSamples(text: string): number {
  return Math.max(1, (text.length / 14) * 8000);
}
