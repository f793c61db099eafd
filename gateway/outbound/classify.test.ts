import assert from 'node:assert/strict';
import { sipfragStatus } from '../transfer/refer.js';
import { classify } from './sip-originator.js';

const rejected = (status: number, extra: { cancelled?: 'ring-timeout' | 'aborted'; challenge?: boolean } = {}) =>
  ({ kind: 'rejected', status, reason: `reason ${status}`, cancelled: extra.cancelled, challenge: extra.challenge ?? false }) as const;

describe('outbound: outcome classification', () => {
  it('486 and 600 are busy, with the status kept', () => {
    assert.deepEqual(classify(rejected(486)), { outcome: 'busy', sipStatus: 486, reason: 'reason 486' });
    assert.deepEqual(classify(rejected(600)), { outcome: 'busy', sipStatus: 600, reason: 'reason 600' });
  });

  it('408 and 480 are no-answer; a 487 after our ring-timeout CANCEL is no-answer', () => {
    assert.equal(classify(rejected(408)).outcome, 'no-answer');
    assert.equal(classify(rejected(480)).outcome, 'no-answer');
    assert.deepEqual(classify(rejected(487, { cancelled: 'ring-timeout' })), { outcome: 'no-answer', sipStatus: 487, reason: 'ring timeout (CANCEL sent)' });
  });

  it('a 487 without our CANCEL, other 4xx-6xx and a repeated challenge are failed with the status', () => {
    assert.deepEqual(classify(rejected(487)), { outcome: 'failed', sipStatus: 487, reason: 'reason 487' });
    assert.deepEqual(classify(rejected(503)), { outcome: 'failed', sipStatus: 503, reason: 'reason 503' });
    assert.deepEqual(classify(rejected(407, { challenge: true })), { outcome: 'failed', sipStatus: 407, reason: 'authentication failed: reason 407' });
  });

  it('an abort is failed whatever the final status', () => {
    assert.deepEqual(classify(rejected(487, { cancelled: 'aborted' })), { outcome: 'failed', sipStatus: 487, reason: 'aborted before an answer' });
    assert.deepEqual(classify(rejected(0, { cancelled: 'aborted' })), { outcome: 'failed', reason: 'aborted before an answer' });
  });
});

describe('transfer: message/sipfrag status line (RFC 3420)', () => {
  it('reads the status of a sipfrag body and ignores anything else', () => {
    assert.deepEqual(sipfragStatus('SIP/2.0 200 OK\r\n'), { status: 200, reason: 'OK' });
    assert.deepEqual(sipfragStatus('  SIP/2.0 486 Busy Here'), { status: 486, reason: 'Busy Here' });
    assert.equal(sipfragStatus('INVITE sip:x@y SIP/2.0'), undefined);
    assert.equal(sipfragStatus(''), undefined);
  });
});
