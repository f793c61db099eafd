import { AzureTts, ElevenLabsTts } from './http-tts.js';
import { DeepgramStt } from './deepgram-stt.js';
import { EspeakTts } from './espeak-tts.js';
import { FallbackStt, FallbackTts } from './fallback.js';
import { PocketsphinxStt } from './pocketsphinx-stt.js';
import type { SttProvider, TtsProvider } from './speech-provider.js';

/** Provider credentials (opened from sealed secrets by the caller; never logged). */
export interface SpeechCredentials {
  readonly elevenlabs?: { readonly apiKey: string; readonly baseUrl?: string; readonly modelId?: string };
  readonly azure?: { readonly apiKey: string; readonly region?: string; readonly baseUrl?: string };
  readonly deepgram?: { readonly apiKey: string; readonly baseUrl?: string; readonly model?: string };
}

/** The part of a speech profile that picks the TTS (spec: Provider + Voice Name). */
export interface SpeechProfileVoice {
  readonly provider: string;
  readonly voiceName: string;
  readonly language: string;
}

export interface ResolvedTts {
  readonly tts: TtsProvider;
  /** Voice for the primary provider; the espeak-ng fallback picks its voice from the language. */
  readonly voice: string;
}

/**
 * TTS for a speech profile: the profile's cloud provider when its credentials are configured,
 * always backed by espeak-ng (a retryable cloud failure still gets the caller an answer).
 * Providers without an adapter here, or without credentials, speak with espeak-ng.
 */
export function ttsForProfile(profile: SpeechProfileVoice, credentials: SpeechCredentials = {}): ResolvedTts {
  const offline = new EspeakTts();
  if (profile.provider === 'elevenlabs' && credentials.elevenlabs) {
    return { tts: new FallbackTts([new ElevenLabsTts(credentials.elevenlabs), withVoice(offline, '')]), voice: profile.voiceName };
  }
  if (profile.provider === 'azure' && credentials.azure) {
    return { tts: new FallbackTts([new AzureTts(credentials.azure), withVoice(offline, '')]), voice: profile.voiceName };
  }
  return { tts: offline, voice: profile.provider === 'espeak-ng' ? profile.voiceName : '' };
}

/** STT: Deepgram when configured (falling back to the offline engine), else pocketsphinx. */
export function sttFor(credentials: SpeechCredentials = {}, vocabulary: readonly string[] = []): SttProvider {
  const offline = new PocketsphinxStt({ vocabulary });
  return credentials.deepgram ? new FallbackStt([new DeepgramStt(credentials.deepgram), offline]) : offline;
}

/** A provider that ignores the requested voice (a cloud voice id means nothing to espeak-ng). */
function withVoice(provider: TtsProvider, voice: string): TtsProvider {
  return { name: provider.name, synthesize: (request) => provider.synthesize({ ...request, voice }) };
}
