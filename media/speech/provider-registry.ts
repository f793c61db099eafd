import type { Logger } from '../../core/logger.js';
import { AzureTts, ElevenLabsTts } from './http-tts.js';
import { DeepgramStt } from './deepgram-stt.js';
import { EspeakTts } from './espeak-tts.js';
import { FallbackStt, FallbackTts, type FallbackOptions } from './fallback.js';
import { PocketsphinxStt } from './pocketsphinx-stt.js';
import { SpeechProviderError, type SttProvider, type TtsProvider } from './speech-provider.js';
import { timedStt, timedTts } from './speech-metrics.js';

/** Provider credentials (opened from sealed secrets by the caller; never logged). */
export interface SpeechCredentials {
  readonly elevenlabs?: { readonly apiKey: string; readonly baseUrl?: string; readonly modelId?: string };
  readonly azure?: { readonly apiKey: string; readonly region?: string; readonly baseUrl?: string };
  readonly deepgram?: { readonly apiKey: string; readonly baseUrl?: string; readonly model?: string };
}

/** Which speech-to-text serves which languages: `*`, a primary subtag (`hi`) or a full tag (`hi-IN`). */
export interface SttRoute {
  readonly languages: readonly string[];
  readonly provider: 'deepgram' | 'offline';
}

/** A tenant's speech settings as the media side needs them (control-api maps its schema to this). */
export interface CallSpeechSettings {
  readonly credentials: SpeechCredentials;
  /** First matching route wins; none matching: Deepgram when configured, else offline. */
  readonly sttRoutes?: readonly SttRoute[];
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
  /** Why a cloud profile speaks with espeak-ng instead (no credentials, no adapter), to log once per call. */
  readonly offlineReason?: string;
}

export interface ResolvedStt {
  readonly stt: SttProvider;
  /** Set when nothing can recognise the language: `stt` then refuses every stream with this reason. */
  readonly unsupported?: string;
}

/**
 * TTS for a speech profile: the profile's cloud provider when its credentials are configured,
 * always backed by espeak-ng (a failing cloud still gets the caller an answer, see FallbackTts).
 * Providers without an adapter here, or without credentials, speak with espeak-ng.
 */
export function ttsForProfile(profile: SpeechProfileVoice, credentials: SpeechCredentials = {}, fallback: FallbackOptions = {}): ResolvedTts {
  // Each provider timed on its own (speech-metrics.ts), inside the fallback chain.
  const offline = timedTts(new EspeakTts());
  if (profile.provider === 'elevenlabs' && credentials.elevenlabs) {
    return { tts: new FallbackTts([timedTts(new ElevenLabsTts(credentials.elevenlabs)), withVoice(offline, '')], fallback), voice: profile.voiceName };
  }
  if (profile.provider === 'azure' && credentials.azure) {
    return { tts: new FallbackTts([timedTts(new AzureTts(credentials.azure)), withVoice(offline, '')], fallback), voice: profile.voiceName };
  }
  if (profile.provider === 'espeak-ng') return { tts: offline, voice: profile.voiceName };
  const adapter = profile.provider === 'elevenlabs' || profile.provider === 'azure';
  return {
    tts: offline,
    voice: '',
    offlineReason: adapter
      ? `the tenant has no ${profile.provider} credentials (settings.speech.${profile.provider})`
      : `the platform has no ${profile.provider} adapter`,
  };
}

/**
 * The offline recogniser's languages: Debian ships pocketsphinx with the en-us model only
 * (media/speech/pocketsphinx-stt.ts refuses any other language).
 */
export function offlineSttSupports(language: string): boolean {
  return language.toLowerCase().startsWith('en');
}

/** `*`, the same tag, or the tag's primary language (`hi` serves `hi-IN`), case-insensitive. */
export function languageMatches(pattern: string, language: string): boolean {
  const p = pattern.toLowerCase();
  const l = language.toLowerCase();
  return p === '*' || p === l || p === l.split('-')[0];
}

/**
 * STT for a number's language: the first route whose languages match picks the provider (none:
 * Deepgram when configured, else offline). Deepgram is backed by the offline recogniser where it
 * has the language; without any provider for the language the result says so (`unsupported`).
 */
export function sttForLanguage(
  language: string,
  settings: CallSpeechSettings = { credentials: {} },
  options: { readonly vocabulary?: readonly string[]; readonly fallback?: FallbackOptions; readonly logger?: Logger } = {},
): ResolvedStt {
  const { deepgram } = settings.credentials;
  const route = settings.sttRoutes?.find((r) => r.languages.some((p) => languageMatches(p, language)));
  const provider = route?.provider ?? (deepgram ? 'deepgram' : 'offline');
  const offline = offlineSttSupports(language) ? timedStt(new PocketsphinxStt({ vocabulary: options.vocabulary ?? [] })) : undefined;
  if (provider === 'deepgram' && deepgram) {
    // The call's logger: the adapter reports what does not end a stream (a malformed message) itself.
    const cloud = timedStt(new DeepgramStt({ ...deepgram, ...(options.logger ? { logger: options.logger } : {}) }));
    return { stt: new FallbackStt(offline ? [cloud, offline] : [cloud], options.fallback) };
  }
  if (offline) return { stt: offline };
  const reason =
    provider === 'deepgram'
      ? `no speech-to-text for ${language}: the route names deepgram but the tenant has no deepgram credentials`
      : `no speech-to-text for ${language}: the offline recogniser has English only and no cloud speech-to-text serves ${language}`;
  return { stt: new UnavailableStt(reason), unsupported: reason };
}

/** The recogniser of a call whose language nothing can recognise: every stream is refused. */
class UnavailableStt implements SttProvider {
  readonly name = 'none';

  constructor(private readonly reason: string) {}

  open(): Promise<never> {
    return Promise.reject(new SpeechProviderError(this.name, this.reason, false));
  }
}

/** A provider that ignores the requested voice (a cloud voice id means nothing to espeak-ng). */
function withVoice(provider: TtsProvider, voice: string): TtsProvider {
  return { name: provider.name, synthesize: (request) => provider.synthesize({ ...request, voice }) };
}
