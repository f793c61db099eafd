import type { Kysely } from 'kysely';
import type { CallSpeechSettings, SpeechCredentials } from '../../../media/speech/provider-registry.js';
import type { TenantSpeech } from '../domain/tenant-speech.js';
import type { Database } from '../../platform/store/schema.js';
import type { TenantsRepository } from './tenants-repository.js';

/**
 * The speech a tenant's settings select for its calls (`settings.speech`), in the shape the
 * media side takes. Keys are opened only here, per call, and handed to the provider adapters;
 * they are never logged. Read through the store at every call, so a changed key or route
 * applies to the next call without a restart.
 */
export interface TenantCallSpeech extends CallSpeechSettings {
  /** What a call says when nothing can recognise its language, per language tag. */
  readonly unsupportedLanguageMessages: Readonly<Record<string, string>>;
}

export const offlineSpeech: TenantCallSpeech = { credentials: {}, sttRoutes: [], unsupportedLanguageMessages: {} };

export function speechFromSettings(speech: TenantSpeech | undefined): TenantCallSpeech {
  if (!speech) return offlineSpeech;
  const { deepgram, elevenlabs, azure } = speech;
  // A block without a clear key cannot be used (the repository refuses to store one; a key
  // sealed under a retired platform key would land here): that provider stays off.
  const credentials: SpeechCredentials = {
    ...(deepgram?.apiKey ? { deepgram: { ...deepgram, apiKey: deepgram.apiKey } } : {}),
    ...(elevenlabs?.apiKey ? { elevenlabs: { ...elevenlabs, apiKey: elevenlabs.apiKey } } : {}),
    ...(azure?.apiKey ? { azure: { ...azure, apiKey: azure.apiKey } } : {}),
  };
  return { credentials, sttRoutes: speech.stt, unsupportedLanguageMessages: speech.unsupportedLanguageMessages };
}

export function tenantCallSpeech(db: Kysely<Database>, tenants: Pick<TenantsRepository, 'settingsWithSecrets'>): (tenantId: string) => Promise<TenantCallSpeech> {
  return async (tenantId) => speechFromSettings((await tenants.settingsWithSecrets(db, tenantId))?.speech);
}
