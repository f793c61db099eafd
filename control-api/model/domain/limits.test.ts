import assert from 'node:assert/strict';
import { smartAiSettingsSchema } from '../recipes/recipe-schema.js';
import { campaignSchema } from './campaign.js';
import { insightParameterListSchema, insightParameterSchema, insightValueSchema } from './insight-parameter.js';
import { phoneNumberSchema } from './phone-number.js';
import { accepts, issuesOf, rejectsWith } from '../../../test/helpers/schema-issues.js';

/** One describe per row of the spec's Limits table: just inside and just outside each bound. */

const campaign = { name: 'Renewals', phoneNumber: '+14155550100', recipe: 'Greeter' };
const number = { number: '+14155550100', recipe: 'Greeter', provider: { type: 'nativeStack' } };
const insight = (i: number) => ({ name: `p${i}`, description: 'Did the caller agree?', type: 'boolean' });

describe('spec Limits table', () => {
  describe('insight parameters per agent: 10', () => {
    it('accepts 10 and rejects 11', () => {
      accepts(insightParameterListSchema, Array.from({ length: 10 }, (_, i) => insight(i)));
      rejectsWith(insightParameterListSchema, Array.from({ length: 11 }, (_, i) => insight(i)), ': an agent has at most 10 insight parameters');
    });
  });

  describe('insight description length: 300 characters', () => {
    it('accepts 300 and rejects 301', () => {
      accepts(insightParameterSchema, { ...insight(1), description: 'd'.repeat(300) });
      rejectsWith(insightParameterSchema, { ...insight(1), description: 'd'.repeat(301) }, 'description: insight description must be at most 300 characters');
    });
  });

  describe('insight Text value length: 300 characters', () => {
    it('accepts 300 and rejects 301 (Unicode text counted in characters of the string)', () => {
      const schema = insightValueSchema({ name: 'summary', description: 'Summarise the call', type: 'text' });
      accepts(schema, 'अ'.repeat(300));
      rejectsWith(schema, 'a'.repeat(301), ": insight 'summary' must be at most 300 characters");
    });
  });

  describe('custom pronunciation words per agent: 40', () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`);
    it('accepts 40 words on a number and rejects 41', () => {
      accepts(phoneNumberSchema, { ...number, pronunciationWords: words(40) });
      rejectsWith(phoneNumberSchema, { ...number, pronunciationWords: words(41) }, 'pronunciationWords: pronunciationWords must have at most 40 words per agent');
    });
  });

  describe('End Call on Silence: 1 to 5 minutes', () => {
    it('accepts 1 and 5, rejects 0, 6 and fractions', () => {
      accepts(phoneNumberSchema, { ...number, endCallOnSilenceMinutes: 1 });
      accepts(phoneNumberSchema, { ...number, endCallOnSilenceMinutes: 5 });
      rejectsWith(phoneNumberSchema, { ...number, endCallOnSilenceMinutes: 0 }, 'endCallOnSilenceMinutes: endCallOnSilenceMinutes must be between 1 and 5 minutes');
      rejectsWith(phoneNumberSchema, { ...number, endCallOnSilenceMinutes: 6 }, 'endCallOnSilenceMinutes: endCallOnSilenceMinutes must be between 1 and 5 minutes');
      rejectsWith(phoneNumberSchema, { ...number, endCallOnSilenceMinutes: 2.5 }, 'endCallOnSilenceMinutes: endCallOnSilenceMinutes must be a whole number');
    });
  });

  describe('Max call duration with AI: 5 to 30 minutes', () => {
    it('accepts 5 and 30, rejects 4 and 31', () => {
      accepts(phoneNumberSchema, { ...number, maxCallDurationMinutes: 5 });
      accepts(phoneNumberSchema, { ...number, maxCallDurationMinutes: 30 });
      rejectsWith(phoneNumberSchema, { ...number, maxCallDurationMinutes: 4 }, 'maxCallDurationMinutes: maxCallDurationMinutes must be between 5 and 30 minutes');
      rejectsWith(phoneNumberSchema, { ...number, maxCallDurationMinutes: 31 }, 'maxCallDurationMinutes: maxCallDurationMinutes must be between 5 and 30 minutes');
    });
  });

  describe('Ring duration: 15 to 30 seconds', () => {
    it('accepts 15 and 30, rejects 14 and 31', () => {
      accepts(campaignSchema, { ...campaign, ringDurationSeconds: 15 });
      accepts(campaignSchema, { ...campaign, ringDurationSeconds: 30 });
      rejectsWith(campaignSchema, { ...campaign, ringDurationSeconds: 14 }, 'ringDurationSeconds: ringDurationSeconds must be between 15 and 30 seconds');
      rejectsWith(campaignSchema, { ...campaign, ringDurationSeconds: 31 }, 'ringDurationSeconds: ringDurationSeconds must be between 15 and 30 seconds');
    });
  });

  describe('Max retries per campaign: 0 to 10', () => {
    it('accepts 0 and 10, rejects -1 and 11', () => {
      accepts(campaignSchema, { ...campaign, maxRetries: 0 });
      accepts(campaignSchema, { ...campaign, maxRetries: 10 });
      rejectsWith(campaignSchema, { ...campaign, maxRetries: -1 }, 'maxRetries: maxRetries must be between 0 and 10');
      rejectsWith(campaignSchema, { ...campaign, maxRetries: 11 }, 'maxRetries: maxRetries must be between 0 and 10');
    });
  });

  describe('Wait for X seconds before speaking: 1 to 5 seconds', () => {
    const wait = (seconds: number) => ({ ...campaign, startLogic: { mode: 'waitSeconds', seconds } });
    it('accepts 1 and 5, rejects 0 and 6', () => {
      accepts(campaignSchema, wait(1));
      accepts(campaignSchema, wait(5));
      rejectsWith(campaignSchema, wait(0), 'startLogic.seconds: startLogic.seconds must be between 1 and 5 seconds');
      rejectsWith(campaignSchema, wait(6), 'startLogic.seconds: startLogic.seconds must be between 1 and 5 seconds');
    });
  });

  describe('Expressiveness: 0 to 1, default 0.5', () => {
    it('defaults to 0.5, accepts 0 and 1, rejects -0.01 and 1.01', () => {
      assert.equal(smartAiSettingsSchema.parse({ prompt: 'Help' }).expressiveness, 0.5);
      accepts(smartAiSettingsSchema, { prompt: 'Help', expressiveness: 0 });
      accepts(smartAiSettingsSchema, { prompt: 'Help', expressiveness: 1 });
      rejectsWith(smartAiSettingsSchema, { prompt: 'Help', expressiveness: -0.01 }, 'expressiveness: expressiveness must be between 0 and 1');
      rejectsWith(smartAiSettingsSchema, { prompt: 'Help', expressiveness: 1.01 }, 'expressiveness: expressiveness must be between 0 and 1');
    });
  });

  it('reports every violated bound of one document at once', () => {
    assert.equal(issuesOf(phoneNumberSchema, { ...number, endCallOnSilenceMinutes: 9, maxCallDurationMinutes: 1 }).length, 2);
  });
});
