import { spawn } from 'node:child_process';
import { Resampler } from './resampler.js';
import { SpeechProviderError, type TtsProvider, type TtsRequest } from './speech-provider.js';

/** espeak-ng voice for a BCP-47 tag: `en-US` -> `en-us`, `hi-IN` -> `hi` (espeak names Indian languages without region). */
export function espeakVoiceFor(language: string): string {
  const [lang = 'en', region] = language.toLowerCase().split(/[-_]/);
  if (lang === 'en') return region === 'gb' || region === 'in' ? 'en' : 'en-us';
  return lang;
}

/**
 * Offline TTS: Debian's espeak-ng, text on stdin (never on the command line, so text cannot
 * become an option), WAV on stdout at 22.05 kHz streamed and resampled to 8 kHz chunk by chunk.
 * Aborting kills the process.
 */
export class EspeakTts implements TtsProvider {
  readonly name = 'espeak-ng';

  constructor(private readonly options: { readonly binary?: string; readonly wordsPerMinute?: number } = {}) {}

  async *synthesize({ text, voice, language, signal }: TtsRequest): AsyncIterable<Int16Array> {
    if (signal.aborted || text.trim() === '') return;
    const args = ['--stdout', '-v', voice || espeakVoiceFor(language), '-s', String(this.options.wordsPerMinute ?? 165)];
    const child = spawn(this.options.binary ?? 'espeak-ng', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const kill = (): void => {
      child.kill('SIGKILL');
    };
    signal.addEventListener('abort', kill, { once: true });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 2000) stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const spawnError = new Promise<Error>((resolve) => child.on('error', resolve));
    child.stdin.on('error', () => undefined);
    child.stdin.end(text);
    const resampler = new Resampler(22050, 8000);
    let header: Buffer | undefined = Buffer.alloc(0);
    let odd: Buffer | undefined;
    try {
      for await (const data of child.stdout as AsyncIterable<Buffer>) {
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
      const code = await Promise.race([exited, spawnError]);
      if (code instanceof Error) throw new SpeechProviderError(this.name, `cannot run espeak-ng: ${code.message}`, false, code);
      if (code !== 0) throw new SpeechProviderError(this.name, `espeak-ng exited ${String(code)}: ${stderr.trim()}`, false);
    } finally {
      signal.removeEventListener('abort', kill);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }
}
