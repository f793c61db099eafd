import assert from 'node:assert/strict';
import type { CallEnd } from '../calls/call-types.js';
import { callEndOf, recordedEnd } from './call-end-record.js';

const ran = (endReason: string): CallEnd => ({ endedAt: new Date(Date.UTC(2026, 0, 5, 10, 0, 30)), answeredAt: new Date(Date.UTC(2026, 0, 5, 10, 0, 0)), outcome: 'completed', sipStatus: 200, endReason });

describe('call record end: what the telephony side knows overrides "completed"', () => {
  it('a bridged call whose caller never ACKed our 200 is failed / transferNotAcked', () => {
    assert.deepEqual(recordedEnd(ran('transferred'), { endReason: 'ack-timeout', transfers: [{ ok: true, method: 'bridge' }] }), { ...ran('transferred'), outcome: 'failed', endReason: 'transferNotAcked' });
  });

  it('an unACKed call without a transfer is failed / ackTimeout', () => {
    assert.deepEqual(recordedEnd(ran('callerHangup'), { endReason: 'ack-timeout', transfers: [] }), { ...ran('callerHangup'), outcome: 'failed', endReason: 'ackTimeout' });
  });

  it('a REFER whose outcome never came is failed / transferUnconfirmed, the disposition kept', () => {
    const closed = { ...ran('closed'), disposition: 'missed' };
    assert.deepEqual(recordedEnd(closed, { endReason: 'local-bye', transfers: [{ ok: false, reason: 'no final NOTIFY', unconfirmed: true }] }), { ...closed, outcome: 'failed', endReason: 'transferUnconfirmed' });
  });

  it('only the last transfer counts: a later bridge that worked leaves the record completed', () => {
    const facts = { endReason: 'remote-bye', transfers: [{ ok: false as const, reason: 'x', unconfirmed: true }, { ok: true as const, method: 'bridge' as const }] };
    assert.deepEqual(recordedEnd(ran('transferred'), facts), ran('transferred'));
  });

  it('a transfer that failed with a status (busy) and confirmed REFERs are left as the run ended them', () => {
    assert.deepEqual(recordedEnd(ran('closed'), { endReason: 'local-bye', transfers: [{ ok: false, reason: 'Busy Here', sipStatus: 486 }] }), ran('closed'));
    assert.deepEqual(recordedEnd(ran('transferred'), { endReason: 'transferred', transfers: [{ ok: true, method: 'refer' }] }), ran('transferred'));
  });
});

describe('callEndOf: the one end a recipe call is recorded with', () => {
  const answeredAt = new Date(Date.UTC(2026, 0, 5, 10, 0, 0));
  const endedAt = new Date(Date.UTC(2026, 0, 5, 10, 0, 30));
  const line = { at: 1, speaker: 'agent' as const, text: 'Sorry, I cannot understand this language.' };

  it('a language nothing could recognise: its line, no disposition, and no telephony override', () => {
    const end = callEndOf({ answeredAt, endedAt, end: { reason: 'ack-timeout' }, speechEnd: { reason: 'unsupported_language', line }, failed: false, transfers: [], recordingRef: '2026-01-05/a.wav' });
    assert.deepEqual(end, { endedAt, answeredAt, outcome: 'completed', sipStatus: 200, endReason: 'unsupported_language', transcript: [line], recordingRef: '2026-01-05/a.wav' });
  });

  it('no run result: the handler failed (error) or the gateway ended the call first (its reason)', () => {
    const failed = callEndOf({ answeredAt, endedAt, end: { reason: 'remote-bye' }, failed: true, transfers: [] });
    assert.equal(failed.endReason, 'error');
    assert.deepEqual(failed.transcript, []);
    const unacked = callEndOf({ answeredAt, endedAt, end: { reason: 'ack-timeout' }, failed: false, transfers: [] });
    assert.deepEqual([unacked.outcome, unacked.endReason], ['failed', 'ackTimeout']);
  });
});
