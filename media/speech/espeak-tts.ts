import { Resampler } from './resampler.js';
import { SpeechProviderError, type TtsProvider, type TtsRequest } from './speech-provider.js';
import { processSpawner, SpawnError, type ProcessSpawner } from './spawner/process-spawner.js';

/** espeak-ng voice for a BCP-47 tag: `en-US` -> `en-us`, `hi-IN` -> `hi` (espeak names Indian languages without region). */
export function espeakVoiceFor(language: string): string {
  const [lang = 'en', region] = language.toLowerCase().split(/[-_]/);
  if (lang === 'en') return region === 'gb' || region === 'in' ? 'en' : 'en-us';
  return lang;
}

/**
 * Offline TTS: Debian's espeak-ng, text on stdin (never on the command line, so text cannot
 * become an option), WAV on stdout at 22.05 kHz streamed and resampled to 8 kHz chunk by chunk.
 * Started through the process spawner (spawner/process-spawner.ts: a fork of the platform's own
 * process stalls every call's audio). Aborting kills it.
 */
export class EspeakTts implements TtsProvider {
  readonly name = 'espeak-ng';

  constructor(private readonly options: { readonly binary?: string; readonly wordsPerMinute?: number; readonly spawner?: ProcessSpawner } = {}) {}

  async *synthesize({ text, voice, language, signal }: TtsRequest): AsyncIterable<Int16Array> {
    if (signal.aborted || text.trim() === '') return;
    const argv = [this.options.binary ?? 'espeak-ng', '--stdout', '-v', voice || espeakVoiceFor(language), '-s', String(this.options.wordsPerMinute ?? 165)];
    // Stops the program when this generator is left early (a consumer that stopped reading).
    const stop = new AbortController();
    const onAbort = (): void => stop.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const resampler = new Resampler(22050, 8000);
    let header: Buffer | undefined = Buffer.alloc(0);
    let odd: Buffer | undefined;
    try {
      const run = await (this.options.spawner ?? processSpawner()).run(argv, text, stop.signal);
      for await (const data of run.stdout) {
        if (signal.aborted) return;
        let bytes = data;
        if (header) {
          header = Buffer.concat([header, bytes]);
          const at = header.indexOf('data');
          if (at < 0 || header.length < at + 8) continue;
          bytes = header.subarray(at + 8);
          header = undefined;
        }
        if (odd) {
          bytes = Buffer.concat([odd, bytes]);
          odd = undefined;
        }
        if (bytes.length % 2 === 1) {
          odd = bytes.subarray(bytes.length - 1);
          bytes = bytes.subarray(0, bytes.length - 1);
        }
        const pcm = new Int16Array(bytes.length / 2);
        for (let i = 0; i < pcm.length; i++) pcm[i] = bytes.readInt16LE(2 * i);
        const out = resampler.process(pcm);
        if (out.length > 0) yield out;
      }
      if (signal.aborted) return;
      const { code, stderr } = await run.ended;
      if (code !== 0) throw new SpeechProviderError(this.name, `espeak-ng exited ${String(code)}: ${stderr.trim()}`, false);
    } catch (error) {
      if (error instanceof SpawnError) throw new SpeechProviderError(this.name, `cannot run espeak-ng: ${error.message}`, false, error);
      throw error;
    } finally {
      signal.removeEventListener('abort', onAbort);
      stop.abort();
    }
  }
}
