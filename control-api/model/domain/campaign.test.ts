import assert from 'node:assert/strict';
import { campaignSchema } from './campaign.js';
import { accepts, rejectsWith } from '../../../test/helpers/schema-issues.js';

/** The spec's "Campaign configuration" table, row by row. */
const base = { name: 'Renewals', phoneNumber: '+14155550100', recipe: 'Greeter' };

describe('campaign configuration', () => {
  it('fills the defaults: voice channel, Via API trigger, start immediately, reschedule in DND, unpublished', () => {
    const c = campaignSchema.parse(base);
    assert.equal(c.channel, 'voice');
    assert.equal(c.trigger, 'api');
    assert.deepEqual(c.startLogic, { mode: 'immediately' });
    assert.equal(c.dndBehaviour, 'reschedule');
    assert.equal(c.workingWindow.enabled, false);
    assert.deepEqual(c.retryScenarios, ['busy', 'noAnswer', 'failed']);
    assert.equal(c.published, false);
  });

  describe('Name', () => {
    it('is required and a readable identifier', () => {
      rejectsWith(campaignSchema, { ...base, name: '' }, 'name: name is required');
      rejectsWith(campaignSchema, { ...base, name: '-x' }, "name: name must start with a letter or digit and contain only letters, digits, spaces and . _ - ( )");
      rejectsWith(campaignSchema, { ...base, name: 'n'.repeat(101) }, 'name: name must be at most 100 characters');
    });
  });

  describe('Channel and Trigger', () => {
    it('only Voice and Via API', () => {
      rejectsWith(campaignSchema, { ...base, channel: 'sms' }, "channel: channel must be 'voice'");
      rejectsWith(campaignSchema, { ...base, trigger: 'upload' }, "trigger: trigger must be 'api' (Via API)");
    });
  });

  describe('Voice Integration', () => {
    it('is a phone number, normalised to E.164', () => {
      assert.equal(campaignSchema.parse({ ...base, phoneNumber: '+91 98765-43210' }).phoneNumber, '+919876543210');
      rejectsWith(campaignSchema, { ...base, phoneNumber: '12' }, 'phoneNumber: phoneNumber must be a phone number with country code in E.164 form, e.g. +14155550100');
    });
  });

  describe('Recipe', () => {
    it('is required', () => {
      rejectsWith(campaignSchema, { name: 'x', phoneNumber: '+14155550100' }, 'recipe: recipe must be a string');
    });
  });

  describe('Start logic', () => {
    it('accepts the three modes and needs seconds only for waitSeconds', () => {
      accepts(campaignSchema, { ...base, startLogic: { mode: 'waitForGreeting' } });
      accepts(campaignSchema, { ...base, startLogic: { mode: 'waitSeconds', seconds: 3 } });
      rejectsWith(campaignSchema, { ...base, startLogic: { mode: 'later' } }, 'startLogic.mode: startLogic.mode must be one of immediately, waitForGreeting, waitSeconds');
      rejectsWith(campaignSchema, { ...base, startLogic: { mode: 'waitSeconds' } }, 'startLogic.seconds: startLogic.seconds must be a number');
    });
  });

  describe('Working window', () => {
    it('custom mode needs HH:MM start and end and allows overnight windows', () => {
      accepts(campaignSchema, { ...base, workingWindow: { enabled: true, mode: 'custom', start: '22:00', end: '06:00', timezone: 'Asia/Kolkata' } });
      rejectsWith(campaignSchema, { ...base, workingWindow: { enabled: true, mode: 'custom', start: '09:00' } }, 'workingWindow.end: workingWindow.end is required for a custom working window');
      rejectsWith(campaignSchema, { ...base, workingWindow: { enabled: true, mode: 'custom', start: '9:00', end: '18:00' } }, 'workingWindow.start: workingWindow.start must be a time of day as HH:MM (00:00 to 23:59)');
      rejectsWith(campaignSchema, { ...base, workingWindow: { enabled: true, mode: 'custom', start: '09:00', end: '24:00' } }, 'workingWindow.end: workingWindow.end must be a time of day as HH:MM (00:00 to 23:59)');
      rejectsWith(campaignSchema, { ...base, workingWindow: { enabled: true, mode: 'custom', start: '09:00', end: '09:00' } }, 'workingWindow.end: workingWindow.end must differ from workingWindow.start');
      rejectsWith(campaignSchema, { ...base, workingWindow: { enabled: true, mode: 'custom', start: '09:00', end: '17:00', timezone: 'Mars/Base' } }, "workingWindow.timezone: workingWindow.timezone must be an IANA timezone such as 'Asia/Kolkata' or 'UTC'");
    });

    it('business-hours mode needs a profile; a disabled window needs nothing', () => {
      accepts(campaignSchema, { ...base, workingWindow: { enabled: true, mode: 'businessHours', profile: 'Office' } });
      rejectsWith(campaignSchema, { ...base, workingWindow: { enabled: true, mode: 'businessHours' } }, 'workingWindow.profile: workingWindow.profile (a business-hours profile name) is required in businessHours mode');
      accepts(campaignSchema, { ...base, workingWindow: { enabled: false, mode: 'businessHours' } });
    });
  });

  describe('Behaviour during DND hours', () => {
    it('is reschedule or discard', () => {
      accepts(campaignSchema, { ...base, dndBehaviour: 'discard' });
      rejectsWith(campaignSchema, { ...base, dndBehaviour: 'drop' }, "dndBehaviour: dndBehaviour must be 'reschedule' or 'discard'");
    });
  });

  describe('Retry interval and scenarios', () => {
    it('interval is 1 to 1440 minutes', () => {
      accepts(campaignSchema, { ...base, retryIntervalMinutes: 1 });
      accepts(campaignSchema, { ...base, retryIntervalMinutes: 1440 });
      rejectsWith(campaignSchema, { ...base, retryIntervalMinutes: 0 }, 'retryIntervalMinutes: retryIntervalMinutes must be between 1 and 1440 minutes');
      rejectsWith(campaignSchema, { ...base, retryIntervalMinutes: 1441 }, 'retryIntervalMinutes: retryIntervalMinutes must be between 1 and 1440 minutes');
    });

    it('scenarios are Busy, No-answer, Failed, each once, at least one when retrying', () => {
      accepts(campaignSchema, { ...base, maxRetries: 2, retryScenarios: ['noAnswer'] });
      rejectsWith(campaignSchema, { ...base, retryScenarios: ['voicemail'] }, 'retryScenarios.0: retryScenarios entries must be one of busy, noAnswer, failed');
      rejectsWith(campaignSchema, { ...base, retryScenarios: ['busy', 'busy'] }, 'retryScenarios: retryScenarios lists a scenario twice');
      rejectsWith(campaignSchema, { ...base, maxRetries: 1, retryScenarios: [] }, 'retryScenarios: retryScenarios needs at least one scenario when maxRetries is above 0');
    });
  });

  describe('Publish', () => {
    it('is a boolean flag', () => {
      assert.equal(campaignSchema.parse({ ...base, published: true }).published, true);
      rejectsWith(campaignSchema, { ...base, published: 'yes' }, 'published: published must be true or false');
    });
  });
});
