import assert from 'node:assert/strict';
import { normaliseE164 } from './common.js';
import { phoneNumberSchema } from './phone-number.js';
import { accepts, issuesOf, rejectsWith } from '../../../test/helpers/schema-issues.js';

/** The spec's "Phone number configuration" and "Provider credentials" tables. */
const base = { number: '+14155550100', recipe: 'Greeter', provider: { type: 'nativeStack' } };

describe('phone number configuration', () => {
  describe('Phone Number', () => {
    it('normalises the typed forms to E.164', () => {
      assert.equal(normaliseE164('+91 98765 43210'), '+919876543210');
      assert.equal(normaliseE164('0044 20 7946 0958'), '+442079460958');
      assert.equal(normaliseE164('(415) 555-0100'), undefined); // no country code
      assert.equal(normaliseE164('14155550100'), '+14155550100'); // digits only, as SendMessage sends them
      assert.equal(phoneNumberSchema.parse({ ...base, number: '+1 (415) 555-0100' }).number, '+14155550100');
    });

    it('rejects numbers that are not E.164', () => {
      for (const bad of ['+0123456789', '+12345', '+1234567890123456', 'phone']) {
        rejectsWith(phoneNumberSchema, { ...base, number: bad }, 'number: number must be a phone number with country code in E.164 form, e.g. +14155550100');
      }
    });
  });

  describe('Provider and credentials', () => {
    it('provider A needs Account SID and Auth Token', () => {
      accepts(phoneNumberSchema, { ...base, provider: { type: 'providerA', accountSid: 'AC1', authToken: 't' } });
      rejectsWith(phoneNumberSchema, { ...base, provider: { type: 'providerA', authToken: 't' } }, 'provider.accountSid: provider.accountSid must be a string');
    });

    it('provider B needs Account SID, API Key, API Token, Outbound App Id, Sub Domain', () => {
      const b: Record<string, string> = { type: 'providerB', accountSid: 'a', apiKey: 'k', apiToken: 't', outboundAppId: '42', subDomain: 'api.in' };
      accepts(phoneNumberSchema, { ...base, provider: b });
      for (const field of ['accountSid', 'outboundAppId', 'subDomain']) {
        const { [field]: _dropped, ...rest } = b;
        rejectsWith(phoneNumberSchema, { ...base, provider: rest }, `provider.${field}: provider.${field} must be a string`);
      }
    });

    it('provider C needs API Token, API Key, Plan Id, Plan Name, Sound Id', () => {
      const c = { type: 'providerC', apiToken: 't', apiKey: 'k', planId: 'p1', planName: 'Basic', soundId: 's1' };
      accepts(phoneNumberSchema, { ...base, provider: c });
      rejectsWith(phoneNumberSchema, { ...base, provider: { ...c, planName: '' } }, 'provider.planName: provider.planName is required');
    });

    it('native stack needs nothing; a custom SIP trunk is named', () => {
      accepts(phoneNumberSchema, base);
      accepts(phoneNumberSchema, { ...base, provider: { type: 'customSipTrunk', trunk: 'carrier-1' } });
      rejectsWith(phoneNumberSchema, { ...base, provider: { type: 'customSipTrunk' } }, 'provider.trunk: provider.trunk must be a string');
      rejectsWith(phoneNumberSchema, { ...base, provider: { type: 'acme' } }, 'provider.type: provider.type must be one of providerA, providerB, providerC, nativeStack, customSipTrunk');
    });

    it('secrets are write-only: they may be left out on update (the repository then keeps or requires them)', () => {
      accepts(phoneNumberSchema, { ...base, provider: { type: 'providerA', accountSid: 'AC1' } });
      rejectsWith(phoneNumberSchema, { ...base, provider: { type: 'providerA', accountSid: 'AC1', authToken: '' } }, 'provider.authToken: provider.authToken must not be empty');
    });
  });

  describe('Language, Boosted Keywords, Voice, Pronunciation Words', () => {
    it('language is a BCP 47 tag', () => {
      accepts(phoneNumberSchema, { ...base, language: 'hi-IN' });
      rejectsWith(phoneNumberSchema, { ...base, language: 'Hindi' }, "language: language must be a BCP 47 language tag such as 'en', 'hi-IN' or 'ar'");
    });

    it('boosted keywords: non-empty, at most 100', () => {
      accepts(phoneNumberSchema, { ...base, boostedKeywords: ['मॉन्स्टेरा', 'Monstera'] });
      rejectsWith(phoneNumberSchema, { ...base, boostedKeywords: [''] }, 'boostedKeywords.0: boosted keyword must not be empty');
      rejectsWith(phoneNumberSchema, { ...base, boostedKeywords: Array(101).fill('k') }, 'boostedKeywords: boostedKeywords must have at most 100 entries');
    });

    it('voice names a speech profile; pronunciation words are distinct', () => {
      accepts(phoneNumberSchema, { ...base, voice: 'Asha (hi-IN)' });
      rejectsWith(phoneNumberSchema, { ...base, pronunciationWords: ['GST', 'GST'] }, 'pronunciationWords: pronunciationWords lists a word twice');
    });
  });

  describe('End Call on Silence, Max call duration, Status toggle', () => {
    it('default to 2 min, 15 min and enabled', () => {
      const n = phoneNumberSchema.parse(base);
      assert.equal(n.endCallOnSilenceMinutes, 2);
      assert.equal(n.maxCallDurationMinutes, 15);
      assert.equal(n.enabled, true);
    });

    it('rejects a non-boolean toggle', () => {
      assert.deepEqual(issuesOf(phoneNumberSchema, { ...base, enabled: 'off' }), ['enabled: enabled must be true or false']);
    });
  });
});
