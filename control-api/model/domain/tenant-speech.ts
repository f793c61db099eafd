import { z } from 'zod';
import { languageTag, languageTagPattern, requiredText } from './common.js';
import { secret } from '../../platform/crypto/secret.js';

/**
 * The tenant's cloud speech (`settings.speech`): provider accounts, which speech-to-text serves
 * which languages, and what a call says when nothing can understand its language. Absent: calls
 * use the offline pair (espeak-ng, pocketsphinx). The keys are write-only secrets sealed at rest
 * (like `settings.llm.apiKey`); base URLs are set by the tenant's administrator (self-hosted or
 * regional endpoints, loopback fakes in tests), so like the LLM's they are not SSRF-filtered, but
 * they must not carry credentials.
 */

const serviceUrl = (field: string, protocols: readonly string[]) =>
  z
    .string({ error: `${field} must be a string` })
    .max(2048, { error: `${field} must be at most 2048 characters` })
    .refine((v) => protocols.includes(protocolOf(v) ?? ''), { error: `${field} must be an absolute ${protocols.map((p) => p.slice(0, -1)).join(' or ')} URL`, abort: true })
    .refine((v) => !/^[a-z]+:\/\/[^/]*@/i.test(v), { error: `${field} must not carry credentials; use the apiKey field` });

function protocolOf(value: string): string | undefined {
  try {
    return new URL(value).protocol;
  } catch {
    return undefined;
  }
}

const optionalName = (field: string) =>
  z.string({ error: `${field} must be a string` }).min(1, { error: `${field} must not be empty` }).max(100, { error: `${field} must be at most 100 characters` }).optional();

/** Deepgram live speech-to-text (WebSocket `/v1/listen`). */
export const deepgramSettingsSchema = z
  .object({
    /** Write-only: sent as `Authorization: Token`; masked on read. Required. */
    apiKey: secret('settings.speech.deepgram.apiKey'),
    /** Default `wss://api.deepgram.com`. */
    baseUrl: serviceUrl('settings.speech.deepgram.baseUrl', ['wss:', 'ws:', 'https:', 'http:']).optional(),
    /** Default `nova-3`. */
    model: optionalName('settings.speech.deepgram.model'),
  })
  .strict();

/** ElevenLabs streaming text-to-speech, for speech profiles whose provider is `elevenlabs`. */
export const elevenLabsSettingsSchema = z
  .object({
    /** Write-only: sent as `xi-api-key`; masked on read. Required. */
    apiKey: secret('settings.speech.elevenlabs.apiKey'),
    /** Default `https://api.elevenlabs.io`. */
    baseUrl: serviceUrl('settings.speech.elevenlabs.baseUrl', ['https:', 'http:']).optional(),
    /** Default `eleven_flash_v2_5`. */
    modelId: optionalName('settings.speech.elevenlabs.modelId'),
  })
  .strict();

/** Azure AI Speech text-to-speech, for speech profiles whose provider is `azure`. */
export const azureSpeechSettingsSchema = z
  .object({
    /** Write-only: sent as `Ocp-Apim-Subscription-Key`; masked on read. Required. */
    apiKey: secret('settings.speech.azure.apiKey'),
    /** The resource's region, e.g. `centralindia`: `https://<region>.tts.speech.microsoft.com`. */
    region: z
      .string({ error: 'settings.speech.azure.region must be a string' })
      .regex(/^[a-z0-9]{2,40}$/, { error: "settings.speech.azure.region must be an Azure region name such as 'centralindia'" })
      .optional(),
    /** Instead of the region: a custom endpoint (containers, private links). */
    baseUrl: serviceUrl('settings.speech.azure.baseUrl', ['https:', 'http:']).optional(),
  })
  .strict()
  .superRefine((azure, ctx) => {
    if (azure.region === undefined && azure.baseUrl === undefined) {
      ctx.addIssue({ code: 'custom', path: ['region'], message: 'settings.speech.azure.region is required unless settings.speech.azure.baseUrl is set' });
    }
  });

export const sttProviderNames = ['deepgram', 'offline'] as const;

const routeLanguage = z
  .string({ error: 'settings.speech.stt[].languages entries must be strings' })
  .refine((v) => v === '*' || languageTagPattern.test(v), {
    error: "settings.speech.stt[].languages entries must be '*' or a BCP 47 language tag such as 'hi' or 'hi-IN'",
  });

/** One routing rule: these languages (of the phone number) are recognised by this provider. */
export const sttRouteSchema = z
  .object({
    languages: z
      .array(routeLanguage, { error: 'settings.speech.stt[].languages must be a list' })
      .min(1, { error: 'settings.speech.stt[].languages must name at least one language' })
      .max(50, { error: 'settings.speech.stt[].languages must have at most 50 entries' }),
    provider: z.enum(sttProviderNames, { error: `settings.speech.stt[].provider must be one of ${sttProviderNames.join(', ')}` }),
  })
  .strict();

export const tenantSpeechSchema = z
  .object({
    deepgram: deepgramSettingsSchema.optional(),
    elevenlabs: elevenLabsSettingsSchema.optional(),
    azure: azureSpeechSettingsSchema.optional(),
    /**
     * Speech-to-text per number language, first match wins. No match: Deepgram when configured,
     * else the offline recogniser (English only).
     */
    stt: z.array(sttRouteSchema).max(50, { error: 'settings.speech.stt must have at most 50 rules' }).default([]),
    /**
     * Said (then the call ends, end reason `unsupported_language`) when a call's language has no
     * speech-to-text; per language tag, chosen by exact tag, then primary language. Built-in
     * defaults: Hindi for `hi`, English otherwise (docs/voice-pipeline.md).
     */
    unsupportedLanguageMessages: z
      .record(languageTag('settings.speech.unsupportedLanguageMessages language'), requiredText('settings.speech.unsupportedLanguageMessages message', 1_000), {
        error: (issue) =>
          issue.code === 'invalid_key'
            ? "settings.speech.unsupportedLanguageMessages keys must be BCP 47 language tags such as 'en', 'hi-IN' or 'ar'"
            : undefined,
      })
      .default({}),
  })
  .strict()
  .superRefine((speech, ctx) => {
    speech.stt.forEach((route, i) => {
      if (route.provider === 'deepgram' && !speech.deepgram) {
        ctx.addIssue({ code: 'custom', path: ['stt', i, 'provider'], message: `settings.speech.stt[${i}].provider deepgram needs settings.speech.deepgram` });
      }
    });
  });
export type TenantSpeech = z.infer<typeof tenantSpeechSchema>;

/** The sealed fields of `settings.speech` (dotted paths from the tenant spec). */
export const speechSecretPaths = ['settings.speech.deepgram.apiKey', 'settings.speech.elevenlabs.apiKey', 'settings.speech.azure.apiKey'] as const;
