import assert from 'node:assert/strict';
import { AppError } from '../../../core/errors.js';
import { parseScheduledTime, parseSendMessage } from './send-message-request.js';

const ctx = { timezone: 'Asia/Kolkata', now: Date.parse('2026-03-01T00:00:00Z') };
const valid = {
  CampaignID: '7f1c2a52-3c84-4a4e-9c43-1d3b1b0e6a11',
  To: { PhoneNumber: '919876543210' },
  ScheduledAt: { Time: '2026-03-02T10:00:00Z' },
};
const issue = (body: unknown): { code: string; field: string | undefined; msg: string } => {
  try {
    parseSendMessage(body, ctx);
  } catch (error) {
    assert.ok(error instanceof AppError);
    return { code: error.code, field: error.meta.argument, msg: error.message };
  }
  assert.fail('expected a rejection');
};

describe('SendMessage request', () => {
  describe('ScheduledAt.Time forms (spec table)', () => {
    it('reads ...Z as UTC and ...+HH:MM as that offset', () => {
      assert.equal(parseScheduledTime('2026-03-02T10:00:00Z', 'Asia/Kolkata'), Date.parse('2026-03-02T10:00:00Z'));
      assert.equal(parseScheduledTime('2026-03-02T10:00:00+05:30', 'UTC'), Date.parse('2026-03-02T04:30:00Z'));
      assert.equal(parseScheduledTime('2026-03-02T10:00:00-03:00', 'UTC'), Date.parse('2026-03-02T13:00:00Z'));
    });

    it('reads a time without offset in the dashboard timezone, DST-correct', () => {
      assert.equal(parseScheduledTime('2026-03-02T10:00:00', 'Asia/Kolkata'), Date.parse('2026-03-02T04:30:00Z'));
      // New York: EST before 2026-03-08, EDT after.
      assert.equal(parseScheduledTime('2026-03-07T10:00:00', 'America/New_York'), Date.parse('2026-03-07T15:00:00Z'));
      assert.equal(parseScheduledTime('2026-03-09T10:00:00', 'America/New_York'), Date.parse('2026-03-09T14:00:00Z'));
    });

    it('rejects malformed and impossible date-times', () => {
      for (const bad of ['2026-03-02 10:00:00', '2026-02-30T10:00:00Z', '2026-03-02T25:00:00Z', '2026-03-02T10:00Z', 'tomorrow', '2026-03-02T10:00:00+5:30']) {
        assert.equal(parseScheduledTime(bad, 'UTC'), undefined, bad);
      }
    });
  });

  it('accepts the spec sample and normalises the number to E.164', () => {
    const parsed = parseSendMessage({ ...valid, Variables: { name: 'Asha' }, Callback: { URL: 'https://crm.example.com/hook', State: { lead: 42 } }, Extra: 'ignored' }, ctx);
    assert.equal(parsed.to, '+919876543210');
    assert.deepEqual(parsed.variables, { name: 'Asha' });
    assert.deepEqual(parsed.callback, { url: 'https://crm.example.com/hook', state: { lead: 42 } });
    assert.equal(parsed.bypassCallingWindow, false);
  });

  it('names the missing field: CampaignID, To.PhoneNumber, ScheduledAt.Time', () => {
    assert.deepEqual(issue({ ...valid, CampaignID: undefined }).field, 'CampaignID');
    assert.deepEqual(issue({ ...valid, To: {} }).field, 'To.PhoneNumber');
    assert.deepEqual(issue({ ...valid, To: undefined }).field, 'To.PhoneNumber');
    assert.deepEqual(issue({ ...valid, ScheduledAt: undefined }).field, 'ScheduledAt.Time');
    assert.equal(issue({ ...valid, CampaignID: undefined }).code, 'invalid_argument');
  });

  it('rejects what a caller would want rejected, naming the field', () => {
    assert.equal(issue({ ...valid, To: { PhoneNumber: '98765-43210' } }).field, 'To.PhoneNumber');
    assert.equal(issue({ ...valid, To: { PhoneNumber: '0919876543' } }).field, 'To.PhoneNumber');
    assert.equal(issue({ ...valid, To: { PhoneNumber: 919876543210 } }).field, 'To.PhoneNumber');
    assert.equal(issue({ ...valid, ScheduledAt: { Time: '02/03/2026' } }).field, 'ScheduledAt.Time');
    assert.equal(issue({ ...valid, ScheduledAt: { Time: '2026-03-02T10:00:00Z', BypassCallingWindow: 'yes' } }).field, 'ScheduledAt.BypassCallingWindow');
    assert.equal(issue({ ...valid, Callback: { URL: 'ftp://x.example.com/' } }).field, 'Callback.URL');
    assert.equal(issue({ ...valid, Callback: { URL: 'javascript:alert(1)' } }).field, 'Callback.URL');
    assert.equal(issue({ ...valid, Callback: { URL: 'https://u:p@x.example.com/' } }).field, 'Callback.URL');
    assert.equal(issue({ ...valid, Callback: { URL: 'https://x.example.com/', State: [1] } }).field, 'Callback.State');
    assert.equal(issue({ ...valid, Variables: ['a'] }).field, 'Variables');
    assert.equal(issue({ ...valid, Variables: 'name=x' }).field, 'Variables');
    assert.equal(issue({ ...valid, Variables: { '1bad': 'x' } }).field, 'Variables.1bad');
    assert.equal(issue({ ...valid, CampaignID: 'not-a-uuid' }).field, 'CampaignID');
    assert.equal(issue({ ...valid, ScheduledAt: { Time: '2028-03-02T10:00:00Z' } }).field, 'ScheduledAt.Time');
  });

  it('treats a non-object body as malformed', () => {
    assert.equal(issue([valid]).code, 'malformed');
  });
});
