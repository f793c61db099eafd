import { z } from 'zod';
import { boundedInt, e164, languageTag, resourceName, text } from './common.js';
import { secret } from '../../platform/crypto/secret.js';

/**
 * Phone number configuration (spec: "Phone number configuration" and "Provider credentials").
 * Providers are named by the spec's letters, because the spec names no vendors.
 */

export const providerTypes = ['providerA', 'providerB', 'providerC', 'nativeStack', 'customSipTrunk'] as const;
export type ProviderType = (typeof providerTypes)[number];

const credential = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .min(1, { error: `${field} is required` })
    .max(200, { error: `${field} must be at most 200 characters` });

export const providerSchema = z.discriminatedUnion(
  'type',
  [
    /** Cloud communications provider A. */
    z.object({ type: z.literal('providerA'), accountSid: credential('provider.accountSid'), authToken: secret('provider.authToken') }),
    /** Cloud telephony provider B. */
    z.object({
      type: z.literal('providerB'),
      accountSid: credential('provider.accountSid'),
      apiKey: secret('provider.apiKey'),
      apiToken: secret('provider.apiToken'),
      outboundAppId: credential('provider.outboundAppId'),
      subDomain: credential('provider.subDomain'),
    }),
    /** Cloud telephony provider C. */
    z.object({
      type: z.literal('providerC'),
      apiToken: secret('provider.apiToken'),
      apiKey: secret('provider.apiKey'),
      planId: credential('provider.planId'),
      planName: credential('provider.planName'),
      soundId: credential('provider.soundId'),
    }),
    /** The platform's own SIP stack: no credentials. */
    z.object({ type: z.literal('nativeStack') }),
    /** Bring-your-own carrier: the SipTrunk resource (by name) carries the credentials. */
    z.object({ type: z.literal('customSipTrunk'), trunk: resourceName('provider.trunk') }),
  ],
  { error: `provider.type must be one of ${providerTypes.join(', ')}` },
);
export type ProviderConfig = z.infer<typeof providerSchema>;

/** Secret fields per provider variant, as paths inside the PhoneNumber spec. */
export const phoneNumberSecretPaths = ['provider.authToken', 'provider.apiKey', 'provider.apiToken'] as const;

/** Spec Limits: "Custom pronunciation words per agent: 40"; a number is one deployed agent. */
export const maxPronunciationWordsPerNumber = 40;

export const phoneNumberSchema = z.object({
  /** Country code plus full number; normalised to E.164. Natural key. */
  number: e164('number'),
  /** Recipe name: the flow calls on this number run. */
  recipe: resourceName('recipe'),
  provider: providerSchema,
  /** Primary speech-to-text language. */
  language: languageTag('language').default('en-IN'),
  boostedKeywords: z
    .array(text('boosted keyword', 100).min(1, { error: 'boosted keyword must not be empty' }))
    .max(100, { error: 'boostedKeywords must have at most 100 entries' })
    .default([]),
  /** Default Speech Profile (by name). */
  voice: resourceName('voice').optional(),
  /** Words (Pronunciation entries) selected from Word Management. */
  pronunciationWords: z
    .array(text('pronunciation word', 100).min(1, { error: 'pronunciation word must not be empty' }))
    .max(maxPronunciationWordsPerNumber, {
      error: `pronunciationWords must have at most ${maxPronunciationWordsPerNumber} words per agent`,
    })
    .refine((words) => new Set(words).size === words.length, { error: 'pronunciationWords lists a word twice' })
    .default([]),
  endCallOnSilenceMinutes: boundedInt('endCallOnSilenceMinutes', 1, 5, 'minutes').default(2),
  maxCallDurationMinutes: boundedInt('maxCallDurationMinutes', 5, 30, 'minutes').default(15),
  enabled: z.boolean({ error: 'enabled must be true or false' }).default(true),
});
export type PhoneNumberSpec = z.infer<typeof phoneNumberSchema>;
export type PhoneNumberInput = z.input<typeof phoneNumberSchema>;
