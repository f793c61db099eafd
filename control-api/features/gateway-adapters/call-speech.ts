import type { Logger } from '../../../core/logger.js';
import type { ActiveCall } from '../../../core/ports/call-handler.js';
import { EspeakTts } from '../../../media/speech/espeak-tts.js';
import type { ProviderFallback } from '../../../media/speech/fallback.js';
import { sttForLanguage, ttsForProfile } from '../../../media/speech/provider-registry.js';
import type { SttProvider, TtsProvider } from '../../../media/speech/speech-provider.js';
import type { TranscriptLine } from '../calls/call-types.js';
import type { SpeechProfileSpec } from '../../model/domain/speech-profile.js';
import type { Recipe } from '../../model/recipes/recipe-schema.js';
import type { TenantCallSpeech } from '../../model/tenants/tenant-speech.js';

/** The providers one call speaks and listens with. */
export interface CallSpeech {
  readonly tts: TtsProvider;
  readonly voice: string;
  /** The language the TTS speaks (the profile's, else the number's). */
  readonly ttsLanguage: string;
  readonly stt: SttProvider;
  /** Why nothing can recognise the number's language (then `stt` refuses every stream). */
  readonly unsupported?: string;
}

export interface CallSpeechInput {
  /** The number's language (STT). */
  readonly language: string;
  readonly keywords: readonly string[];
  readonly profile?: { readonly name: string; readonly spec: SpeechProfileSpec };
  readonly settings: TenantCallSpeech;
  readonly log: Logger;
  /** Speech-to-text is gone for the rest of the call (every provider dropped). */
  readonly onSttLost: () => void;
}

/**
 * Picks a call's TTS from its speech profile and the tenant's keys, and its STT from the number's
 * language and the tenant's routes (media/speech/provider-registry.ts). Every provider switch is
 * logged once with its reason (provider error messages carry statuses, never keys).
 */
export function callSpeech({ language, keywords, profile, settings, log, onSttLost }: CallSpeechInput): CallSpeech {
  const onFallback = (e: ProviderFallback): void => {
    log.warn(
      { kind: e.kind, from: e.from, to: e.to ?? 'none', reason: e.reason, forRestOfCall: e.forRestOfCall, ...(e.midStream ? { midStream: true } : {}) },
      e.to ? `${e.kind === 'stt' ? 'speech-to-text' : 'text-to-speech'} provider failed: falling back to ${e.to}` : `${e.kind === 'stt' ? 'speech-to-text' : 'text-to-speech'} provider failed: no provider left`,
    );
    if (e.kind === 'stt' && e.noneLeft) onSttLost();
  };
  const voiceOf = profile ? { provider: profile.spec.provider, voiceName: profile.spec.voiceName, language: profile.spec.language } : { provider: 'espeak-ng', voiceName: '', language };
  const tts = ttsForProfile(voiceOf, settings.credentials, { onFallback });
  if (tts.offlineReason) log.info({ profile: profile?.name, provider: voiceOf.provider, reason: tts.offlineReason }, 'speech profile speaks with espeak-ng');
  const stt = sttForLanguage(language, settings, { vocabulary: keywords, fallback: { onFallback }, logger: log });
  return { tts: tts.tts, voice: tts.voice, ttsLanguage: voiceOf.language, stt: stt.stt, ...(stt.unsupported ? { unsupported: stt.unsupported } : {}) };
}

/** Blocks that wait for the caller's words: a recipe without them runs without speech-to-text. */
export function recipeListens(recipe: Recipe): boolean {
  return recipe.blocks.some((b) => b.type === 'smartAi' || b.type === 'ask');
}

/**
 * Built-in texts when the tenant configured none for the language (keyed by primary language).
 * English is the last resort: a caller of any language is likelier to follow it than silence.
 */
export const defaultUnsupportedLanguageMessages: Readonly<Record<string, string>> = {
  en: 'Sorry, this line cannot understand speech in your language yet. Please call again later. Goodbye.',
  hi: 'क्षमा करें, इस लाइन पर अभी आपकी भाषा समझी नहीं जा सकती। कृपया बाद में फिर से कॉल करें। धन्यवाद।',
};

/** The message for `language`: tenant's exact tag, tenant's primary language, built-in, tenant English, built-in English. */
export function unsupportedLanguageMessage(language: string, configured: Readonly<Record<string, string>>): { readonly text: string; readonly language: string } {
  const entries = Object.entries(configured);
  const lower = language.toLowerCase();
  const primary = lower.split('-')[0] ?? lower;
  const exact = entries.find(([tag]) => tag.toLowerCase() === lower);
  if (exact) return { text: exact[1], language: exact[0] };
  const same = entries.find(([tag]) => tag.toLowerCase().split('-')[0] === primary);
  if (same) return { text: same[1], language: same[0] };
  const builtIn = defaultUnsupportedLanguageMessages[primary];
  if (builtIn) return { text: builtIn, language };
  const english = entries.find(([tag]) => tag.toLowerCase().split('-')[0] === 'en');
  return english ? { text: english[1], language: english[0] } : { text: defaultUnsupportedLanguageMessages['en']!, language: 'en' };
}

const primaryOf = (tag: string): string => tag.toLowerCase().split('-')[0] ?? tag;

/**
 * Says the unsupported-language message on the call (no barge-in: nothing is listening) and
 * returns its transcript line. In the call's own voice when the message is in the TTS language,
 * else with espeak-ng's voice for the message's language.
 */
export async function sayUnsupportedLanguage(call: ActiveCall, speech: CallSpeech, language: string, configured: Readonly<Record<string, string>>): Promise<TranscriptLine> {
  const message = unsupportedLanguageMessage(language, configured);
  const own = primaryOf(message.language) === primaryOf(speech.ttsLanguage);
  const tts = own ? speech.tts : new EspeakTts();
  const at = Date.now();
  call.media.output.clear();
  await call.media.output.play(tts.synthesize({ text: message.text, voice: own ? speech.voice : '', language: message.language, signal: call.signal }), call.signal);
  return { at, speaker: 'agent', text: message.text };
}
